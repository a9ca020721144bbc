//! What the payment walk makes of the elements: the open elements and their paths
//! ([`Stack`]), and the blocks — the group header, each payment information (pain.001) and
//! each transaction — whose leaves it gathers ([`OpenBlocks`]).

use crate::formats::xml::Pos;

/// Leaves kept per block: a transaction has a few dozen.
pub(crate) const LEAVES_PER_BLOCK_MAX: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockKind {
    Group,
    PaymentInfo,
    Transaction,
}

/// One block: its absolute path (with indices) and its leaves.
#[derive(Debug, Clone, Default)]
pub(crate) struct Block {
    pub path: String,
    pub pos: Pos,
    /// (relative path, text, position). Attributes appear as `path@Name`.
    pub leaves: Vec<(String, String, Pos)>,
}

impl Block {
    pub(crate) fn get(&self, rel: &str) -> Option<&str> {
        self.leaves
            .iter()
            .find(|(p, _, _)| p == rel)
            .map(|(_, v, _)| v.as_str())
    }
    pub(crate) fn get_pos(&self, rel: &str) -> Option<(&str, Pos)> {
        self.leaves
            .iter()
            .find(|(p, _, _)| p == rel)
            .map(|(_, v, pos)| (v.as_str(), *pos))
    }
    /// The first of several relative paths present.
    pub(crate) fn first<'a, 'r>(&'a self, rels: &[&'r str]) -> Option<(&'r str, &'a str, Pos)> {
        rels.iter()
            .find_map(|r| self.get_pos(r).map(|(v, p)| (*r, v, p)))
    }
}

/// One open element: its name, start, index among its namesakes, children so far, text.
pub(super) struct Frame {
    pub name: String,
    pub pos: Pos,
    index: u32,
    /// Names of the children seen so far, back to back in `child_names`, each with its
    /// count: `(start, len, count)`.
    children: Vec<(u32, u32, u32)>,
    child_names: String,
    pub had_child: bool,
    pub text: String,
}

impl Frame {
    /// Counts one more child called `name`; returns its 1-based index among its namesakes.
    pub(super) fn child(&mut self, name: &str) -> u32 {
        self.had_child = true;
        let names = &self.child_names;
        if let Some(c) = self
            .children
            .iter_mut()
            .find(|(at, len, _)| &names[*at as usize..(*at + *len) as usize] == name)
        {
            c.2 += 1;
            return c.2;
        }
        self.children
            .push((self.child_names.len() as u32, name.len() as u32, 1));
        self.child_names.push_str(name);
        1
    }
}

/// The open elements. Frames above the depth are kept for reuse, with their buffers: a
/// walk allocates per nesting level, not per element.
#[derive(Default)]
pub(super) struct Stack {
    frames: Vec<Frame>,
    depth: usize,
}

impl Stack {
    pub(super) fn push(&mut self, name: &str, pos: Pos, index: u32) {
        if self.depth == self.frames.len() {
            self.frames.push(Frame {
                name: String::new(),
                pos,
                index,
                children: Vec::new(),
                child_names: String::new(),
                had_child: false,
                text: String::new(),
            });
        }
        let f = &mut self.frames[self.depth];
        f.name.clear();
        f.name.push_str(name);
        f.pos = pos;
        f.index = index;
        f.children.clear();
        f.child_names.clear();
        f.had_child = false;
        f.text.clear();
        self.depth += 1;
    }

    pub(super) fn pop(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// The absolute path of the open elements, with indices: a transaction and a payment
    /// information always show theirs, other elements past their first.
    pub(super) fn path(&self) -> String {
        let mut s = String::new();
        for f in &**self {
            s.push('/');
            s.push_str(&f.name);
            if f.index > 1 || matches!(f.name.as_str(), "CdtTrfTxInf" | "TxInf" | "PmtInf") {
                s.push_str(&format!("[{}]", f.index));
            }
        }
        if s.is_empty() {
            s.push('/');
        }
        s
    }
}

impl std::ops::Deref for Stack {
    type Target = [Frame];
    fn deref(&self) -> &[Frame] {
        &self.frames[..self.depth]
    }
}

impl std::ops::DerefMut for Stack {
    fn deref_mut(&mut self) -> &mut [Frame] {
        &mut self.frames[..self.depth]
    }
}

/// The block an element `in_document_depth` deep under the Document starts, if any.
pub(super) fn is_block(
    name: &str,
    parent: Option<&str>,
    in_document_depth: usize,
) -> Option<BlockKind> {
    // Depth 2 under Document is the message root's children; 3 is PmtInf's children.
    match (name, in_document_depth) {
        ("GrpHdr", 2) => Some(BlockKind::Group),
        ("OrgnlGrpInf", 2) => Some(BlockKind::Group),
        ("PmtInf", 2) => Some(BlockKind::PaymentInfo),
        ("CdtTrfTxInf" | "TxInf", 2) => Some(BlockKind::Transaction),
        ("CdtTrfTxInf", 3) if parent == Some("PmtInf") => Some(BlockKind::Transaction),
        _ => None,
    }
}

/// The blocks open: a group header or transaction, and the payment information around a
/// transaction (pain.001), each with its index in the stack.
#[derive(Default)]
pub(super) struct OpenBlocks {
    pub block: Option<(BlockKind, usize, Block)>,
    pub pmtinf: Option<(usize, Block)>,
}

impl OpenBlocks {
    /// A leaf of the innermost open block (none open: dropped), its path relative to the
    /// block and ending in `suffix` (`@Ccy` for an attribute).
    pub(super) fn add_leaf(&mut self, stack: &[Frame], suffix: &str, value: String, pos: Pos) {
        let target = match (self.block.as_mut(), self.pmtinf.as_mut()) {
            (Some((_, at, b)), _) => Some((*at, b)),
            (None, Some((at, b))) => Some((*at, b)),
            _ => None,
        };
        let Some((at, block)) = target else { return };
        if block.leaves.len() >= LEAVES_PER_BLOCK_MAX {
            return;
        }
        let mut path = String::with_capacity(48);
        for (i, f) in stack[at + 1..].iter().enumerate() {
            if i > 0 {
                path.push('/');
            }
            path.push_str(&f.name);
        }
        path.push_str(suffix);
        block.leaves.push((path, value, pos));
    }
}
