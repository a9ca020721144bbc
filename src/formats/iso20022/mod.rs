//! ISO 20022 payment messages: pain.001, pacs.008, pacs.004.
//!
//! Pure: bytes in, transactions and findings (with byte offset, line and element path)
//! out. The message type and version come from the `Document` element's namespace, never
//! from `xsi:schemaLocation` or the file name. A Business Application Header before the
//! Document, an envelope around it, several Documents in one file, namespace prefixes or
//! none, a UTF-8 BOM, CRLF: all read. DOCTYPE (and so every entity trick) is refused;
//! depth and event size are bounded (see `reader`).

pub(crate) mod block;
mod checks;
pub(crate) mod cut;
pub mod generate;
mod parties;
pub(crate) mod reader;
mod scan;
mod transaction;
pub(crate) mod validate;

use crate::findings::{Finding, FindingCode, FindingSink, Severity};
use crate::formats::xml::Pos;
use block::{Block, BlockKind};
use checks::{check_leaves_group, document_end, payment_info_end};
use chrono::NaiveDate;
use reader::WalkEvent;
use rust_decimal::Decimal;
use std::io::{BufRead, BufReader, Read};
use transaction::transaction;

pub use parties::canonical_bic;
pub use validate::is_iban;

/// The message kinds read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A pain.001 customer credit transfer initiation: a customer's instruction to its
    /// bank.
    Pain001,
    /// A pacs.008 FI-to-FI customer credit transfer: the interbank payment.
    Pacs008,
    /// A pacs.004 payment return: an interbank payment sent back, with its reason.
    Pacs004,
}

impl Kind {
    /// The operation keys are scoped to: the message kind.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Pain001 => "pain.001",
            Kind::Pacs008 => "pacs.008",
            Kind::Pacs004 => "pacs.004",
        }
    }
}

/// Versions read, per kind.
pub const SUPPORTED: &str =
    "pain.001.001.03 to .12, pacs.008.001.02 to .13, pacs.004.001.02 to .13";

/// `urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08` → (Pacs008, 8).
pub fn detect(namespace: &str) -> Result<(Kind, u32), String> {
    let id = namespace
        .strip_prefix("urn:iso:std:iso:20022:tech:xsd:")
        .unwrap_or(namespace);
    let parts: Vec<&str> = id.split('.').collect();
    if parts.len() == 4 {
        let version: u32 = parts[3].parse().unwrap_or(0);
        let kind = match (parts[0], parts[1], parts[2]) {
            ("pain", "001", "001") if (3..=12).contains(&version) => Some(Kind::Pain001),
            ("pacs", "008", "001") if (2..=13).contains(&version) => Some(Kind::Pacs008),
            ("pacs", "004", "001") if (2..=13).contains(&version) => Some(Kind::Pacs004),
            _ => None,
        };
        if let Some(k) = kind {
            return Ok((k, version));
        }
    }
    Err(if namespace.is_empty() {
        "a Document without namespace".to_string()
    } else {
        namespace.to_string()
    })
}

/// One transaction, with what its posting needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IsoTx {
    /// 1-based ordinal of the transaction in the file, across documents.
    pub record_no: u64,
    /// Byte offset of the transaction element (`CdtTrfTxInf`, `TxInf`) in the file.
    pub byte_offset: u64,
    /// 1-based line of the transaction element in the file.
    pub line: u64,
    /// The element path of the transaction (`/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[3]`).
    pub path: String,
    /// The message kind of the document it belongs to.
    pub kind: Option<Kind>,
    /// The group header's `MsgId`: the sender's identification of the message.
    pub msg_id: String,
    /// The file's sender: pain.001, the initiating party (its id, else its name, else the
    /// first debtor agent); pacs, the instructing agent of the group header, else of the
    /// transaction, else its debtor agent.
    pub sender: String,
    /// pain.001: the `PmtInfId` of its payment information block (a batch of the debtor's);
    /// empty in pacs messages.
    pub pmt_inf_id: String,
    /// `PmtId/InstrId`: the instructing party's point-to-point reference; may be empty.
    pub instr_id: String,
    /// `PmtId/EndToEndId`: the initiating party's reference, carried unchanged end to end
    /// (`NOTPROVIDED` when the originator gave none).
    pub end_to_end_id: String,
    /// `PmtId/TxId`: the first instructing agent's interbank reference (pacs.004: its
    /// `RtrId`).
    pub tx_id: String,
    /// `PmtId/UETR`: the SWIFT unique end-to-end transaction reference (a UUIDv4); may be
    /// empty.
    pub uetr: String,
    /// The amount in minor units of `currency`: pain.001 `InstdAmt`, pacs.008
    /// `IntrBkSttlmAmt`, pacs.004 `RtrdIntrBkSttlmAmt`.
    pub amount_minor: i64,
    /// The amount's `Ccy`: an ISO 4217 code as the file gives it.
    pub currency: String,
    /// An error was found in this transaction (its currency, its amount, a required
    /// identifier): the file will be rejected, and what the transaction holds may not even
    /// fit the ledger (a currency of 4 characters, or none).
    pub invalid: bool,
    /// pacs: the interbank settlement date (`IntrBkSttlmDt`); pain.001: the requested
    /// execution date. `None` when absent or not a date.
    pub date: Option<NaiveDate>,
    /// The debtor's name (`Dbtr/Nm`); pacs.004: the original payment's debtor.
    pub debtor_name: String,
    /// The debtor's account: its IBAN, else its other id (`DbtrAcct/Id`).
    pub debtor_account: String,
    /// The debtor's bank (`DbtrAgt`): its BIC (8 characters for a primary office), else
    /// `{clearing system}:{member id}`, else its other id.
    pub debtor_agent: String,
    /// The creditor's name (`Cdtr/Nm`); pacs.004: the original payment's creditor.
    pub creditor_name: String,
    /// The creditor's account: its IBAN, else its other id (`CdtrAcct/Id`).
    pub creditor_account: String,
    /// The creditor's bank (`CdtrAgt`), named as `debtor_agent` is.
    pub creditor_agent: String,
    /// The leg: the instructing and instructed agent of the transaction, else of the group
    /// header (pacs messages; empty in pain.001), as `agent_of` names them.
    pub instructing_agent: String,
    /// The agent instructed to carry the payment on (the receiving side of the leg).
    pub instructed_agent: String,
    /// Unstructured remittance information (`RmtInf/Ustrd`), its lines joined by a space.
    pub remittance: String,
    /// pacs.004: the original transaction's identifiers and parties.
    pub original_end_to_end_id: String,
    /// pacs.004: the returned payment's UETR (`OrgnlUETR`).
    pub original_uetr: String,
    /// pacs.004: the returned payment's interbank reference (`OrgnlTxId`).
    pub original_tx_id: String,
    /// pacs.004: the return reason code (`RtrRsnInf/Rsn/Cd`: `AC04` closed account, `AM04`
    /// insufficient funds, …).
    pub return_reason: String,
    /// What the first keying rule (v1, before keys by leg) took from the same transaction,
    /// where it differs: BIC-only agents, a pacs.004's parties from OrgnlTxRef only. The
    /// legacy key and fingerprint are computed from it (`keys::iso_posting`).
    pub v1: IsoTxV1,
}

/// The inputs of the previous keying rule (see [`IsoTx::v1`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IsoTxV1 {
    /// The file's header as read then (its sender by BIC only).
    pub file: Option<std::sync::Arc<IsoHeader>>,
    /// The sender with agents named by BIC only.
    pub sender: String,
    /// The debtor's name, a pacs.004's from `OrgnlTxRef` only.
    pub debtor_name: String,
    /// The debtor's account, a pacs.004's from `OrgnlTxRef` only.
    pub debtor_account: String,
    /// The debtor agent's BIC as written.
    pub debtor_agent: String,
    /// The creditor's name, a pacs.004's from `OrgnlTxRef` only.
    pub creditor_name: String,
    /// The creditor's account, a pacs.004's from `OrgnlTxRef` only.
    pub creditor_account: String,
    /// The creditor agent's BIC as written.
    pub creditor_agent: String,
}

/// The file's identity fields: message kind, its sender, its MsgId.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IsoHeader {
    /// The message kind, from the Document's namespace.
    pub kind: Kind,
    /// The message version (`8` for pacs.008.001.08).
    pub version: u32,
    /// The sender as `agent_of` names it (pacs) or the initiating party (pain.001).
    pub sender: String,
    /// The group header's `MsgId`, the file's natural identity with its sender.
    pub msg_id: String,
}

/// What [`read_file`] hands over as it reads: each document's header before its first
/// transaction, then its transactions, in file order.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum IsoEvent {
    /// A document's identity, before its transactions.
    Header(IsoHeader),
    /// One transaction, complete.
    Transaction(IsoTx),
}

/// What one pass of [`read_file`] gave: the findings and the counts.
#[derive(Debug, Default)]
pub struct IsoSummary {
    /// Every finding, in file order (bounded: `crate::findings::FINDINGS_MAX`).
    pub findings: Vec<Finding>,
    /// ISO 20022 `Document`s read.
    pub documents: u64,
    /// Transactions read, across documents.
    pub transactions: u64,
    /// Bytes read.
    pub bytes: u64,
}

impl IsoSummary {
    /// The findings of severity error: any rejects the file.
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }
}

struct Doc {
    kind: Kind,
    version: u32,
    path: String,
    /// Where the Document element starts.
    pos: Pos,
    group: Option<Block>,
    count: u64,
    sum: Decimal,
    header_sent: bool,
}

struct State {
    findings: FindingSink,
    doc: Option<Doc>,
    record_no: u64,
    documents: u64,
    stopped: bool,
    first_header: bool,
    /// The first header as the v1 rule read it (its sender by BIC only), for the legacy keys.
    header_v1: Option<std::sync::Arc<IsoHeader>>,
    /// Transactions and amount sum of the open payment information block (pain.001).
    pmt_count: u64,
    pmt_sum: Decimal,
}

impl State {
    fn push(&mut self, f: Finding) {
        self.findings.push(f);
    }
    fn err(
        &mut self,
        code: FindingCode,
        pos: Pos,
        path: String,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) {
        let f = Finding::error(code, pos.at(path), None, expected, found);
        self.push(f);
    }
}

/// Reads an ISO 20022 file, calling `on_event` for its header (first document) and each
/// transaction. All findings are in the summary; a file with an error is to be rejected.
pub fn read_file<R: Read>(
    source: R,
    on_event: &mut dyn FnMut(IsoEvent),
) -> std::io::Result<IsoSummary> {
    let source = BufReader::with_capacity(256 * 1024, source);
    read_buffered(source, on_event)
}

fn read_buffered<R: BufRead>(
    source: R,
    on_event: &mut dyn FnMut(IsoEvent),
) -> std::io::Result<IsoSummary> {
    let mut st = State {
        findings: FindingSink::new(),
        doc: None,
        record_no: 0,
        documents: 0,
        stopped: false,
        first_header: true,
        header_v1: None,
        pmt_count: 0,
        pmt_sum: Decimal::ZERO,
    };
    let end = reader::walk(source, &mut |ev| {
        if !st.stopped {
            st.take(ev, on_event);
        }
    })?;
    tracing::debug!(transactions = end.cut, "transactions read by workers");
    Ok(st.finish(end))
}

impl State {
    /// What the walk reported, in document order.
    fn take(&mut self, ev: WalkEvent<'_>, on_event: &mut dyn FnMut(IsoEvent)) {
        match ev {
            WalkEvent::Document {
                namespace,
                path,
                pos,
            } => self.document(&namespace, path, pos),
            WalkEvent::Block {
                kind: BlockKind::Group,
                block,
                ..
            } => {
                let Some(doc) = self.doc.as_mut() else { return };
                if block.path.ends_with("/GrpHdr") || doc.group.is_none() {
                    check_leaves_group(self, block);
                }
            }
            WalkEvent::Block {
                kind: BlockKind::Transaction,
                block,
                payment_info,
            } => transaction(self, &block, payment_info, on_event),
            WalkEvent::Block {
                kind: BlockKind::PaymentInfo,
                ..
            } => {}
            WalkEvent::PaymentInfoEnd(b) => payment_info_end(self, &b),
            WalkEvent::DocumentEnd => document_end(self),
            WalkEvent::Warning(f) => self.push(f),
        }
    }

    /// A Document starts: its message from its namespace, or the read stops there.
    fn document(&mut self, namespace: &str, path: String, pos: Pos) {
        match detect(namespace) {
            Ok((kind, version)) => {
                self.documents += 1;
                self.doc = Some(Doc {
                    kind,
                    version,
                    path,
                    pos,
                    group: None,
                    count: 0,
                    sum: Decimal::ZERO,
                    header_sent: false,
                });
            }
            Err(found) => {
                self.err(
                    FindingCode::UnsupportedMessage,
                    pos,
                    path,
                    format!("a Document namespace of {SUPPORTED}"),
                    found,
                );
                self.stopped = true;
            }
        }
    }

    /// The summary once the walk ended: its fatal finding, or a file without a Document.
    fn finish(mut self, end: reader::WalkEnd) -> IsoSummary {
        if let Some(f) = end.fatal {
            self.findings.push(f);
        } else if self.documents == 0
            && !self
                .findings
                .as_slice()
                .iter()
                .any(|f| f.code == FindingCode::UnsupportedMessage)
        {
            self.findings.push(Finding::error(
                FindingCode::MissingElement,
                Pos {
                    byte_offset: 0,
                    line: 1,
                }
                .at("/"),
                None,
                "a Document element",
                "none",
            ));
        }
        IsoSummary {
            findings: self.findings.finish(
                Pos {
                    byte_offset: end.bytes,
                    line: end.lines,
                }
                .at("/"),
            ),
            documents: self.documents,
            transactions: self.record_no,
            bytes: end.bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_without_transactions_is_one_error_at_its_document() {
        let ns = |id: &str| format!("urn:iso:std:iso:20022:tech:xsd:{id}");
        let grp = "<GrpHdr><MsgId>M1</MsgId><NbOfTxs>0</NbOfTxs></GrpHdr>";
        for (xml, expected, found) in [
            (
                format!(
                    "<Document xmlns=\"{}\"><FIToFICstmrCdtTrf>{grp}</FIToFICstmrCdtTrf></Document>",
                    ns("pacs.008.001.08")
                ),
                "at least one transaction (FIToFICstmrCdtTrf/CdtTrfTxInf) in a pacs.008 message",
                "none (NbOfTxs 0)",
            ),
            (
                format!(
                    "<Document xmlns=\"{}\"><CstmrCdtTrfInitn>{grp}<PmtInf><PmtInfId>P</PmtInfId></PmtInf></CstmrCdtTrfInitn></Document>",
                    ns("pain.001.001.09")
                ),
                "at least one transaction (CstmrCdtTrfInitn/PmtInf/CdtTrfTxInf) in a pain.001 message",
                "none (NbOfTxs 0)",
            ),
            (
                format!(
                    "<Document xmlns=\"{}\"><PmtRtr><GrpHdr><MsgId>R</MsgId></GrpHdr></PmtRtr></Document>",
                    ns("pacs.004.001.09")
                ),
                "at least one transaction (PmtRtr/TxInf) in a pacs.004 message",
                "none",
            ),
        ] {
            let mut events = 0;
            let s = read_file(xml.as_bytes(), &mut |_| events += 1).unwrap();
            let got: Vec<_> = s
                .findings
                .iter()
                .map(|f| {
                    (
                        f.severity,
                        f.code,
                        f.position.byte_offset(),
                        f.position.path(),
                        f.expected.as_str(),
                        f.found.as_str(),
                    )
                })
                .collect();
            assert_eq!(
                got,
                [(
                    Severity::Error,
                    FindingCode::NoTransactions,
                    0,
                    Some("/Document"),
                    expected,
                    found
                )],
                "{xml}"
            );
            assert_eq!((events, s.transactions), (0, 0));
        }
    }
}
