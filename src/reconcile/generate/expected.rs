//! The items a reconciliation of the scenario must give: `expected.jsonl`, one object an
//! item, and `expected-summary.json`, the count per outcome.

use super::{Expected, Role, Scenario};
use crate::reconcile::Outcome;
use std::io::{self, Write};

impl Scenario {
    /// Every item the reconciliation must give, in slot order.
    fn items(&self, f: &mut dyn FnMut(&Expected) -> io::Result<()>) -> io::Result<()> {
        for s in 0..self.roles.len() {
            let role = self.roles[s];
            if matches!(
                role,
                Role::SplitMember | Role::BatchMember | Role::AmbiguousMember
            ) {
                continue;
            }
            self.items_of(s, role, f)?;
        }
        Ok(())
    }

    /// The items of slot `s` (a single payment or line, or a group's head).
    fn items_of(
        &self,
        s: usize,
        role: Role,
        f: &mut dyn FnMut(&Expected) -> io::Result<()>,
    ) -> io::Result<()> {
        use Outcome as O;
        let by_id = self.by_id(s);
        let item = |outcome, matched_by, ours, n| self.expected(s, outcome, matched_by, ours, n);
        let e2e = || vec![self.e2e(s)];
        match role {
            Role::Ordinary => f(&item(O::Matched, Some(by_id), e2e(), Some(1))),
            Role::AmountDate => f(&item(O::Matched, Some("amount_date"), e2e(), Some(1))),
            Role::Fee => f(&item(O::MissingOurs, None, vec![], Some(1))),
            Role::Provisional => f(&item(O::Provisional, None, vec![], Some(1))),
            Role::MissingTheirs => f(&item(O::MissingTheirs, None, e2e(), None)),
            Role::Expected => f(&item(O::Expected, None, e2e(), None)),
            Role::AmountMismatch => f(&item(O::AmountMismatch, Some(by_id), e2e(), Some(1))),
            Role::Tolerance => f(&item(
                O::MatchedWithinTolerance,
                Some(by_id),
                e2e(),
                Some(1),
            )),
            Role::DateMismatch => f(&item(O::DateMismatch, Some(by_id), e2e(), Some(1))),
            Role::CurrencyMismatch => f(&item(O::CurrencyMismatch, Some(by_id), e2e(), Some(1))),
            Role::Duplicate | Role::Returned | Role::ReturnMatched => {
                f(&item(O::Matched, Some(by_id), e2e(), Some(1)))?;
                f(&self.second_entry(s, role))
            }
            Role::SplitHead | Role::BatchHead | Role::AmbiguousHead => f(&self.group_item(s, role)),
            Role::SplitMember | Role::BatchMember | Role::AmbiguousMember => Ok(()),
        }
    }

    /// The level an entry quoting slot `s`'s identifiers ties it by.
    fn by_id(&self, s: usize) -> &'static str {
        let p = self.pay(s);
        if p.quote_uetr && p.uetr.is_some() {
            "uetr"
        } else {
            "end_to_end_id"
        }
    }

    /// An item of slot `s`: `ours` as given, theirs its entry `n` (if any).
    fn expected(
        &self,
        s: usize,
        outcome: Outcome,
        matched_by: Option<&'static str>,
        ours: Vec<String>,
        n: Option<u8>,
    ) -> Expected {
        Expected {
            outcome,
            matched_by,
            ours,
            theirs: n.map(|n| self.bank_ref(s, n)).into_iter().collect(),
            refers_to: None,
        }
    }

    /// The item of a payment's second entry: its duplicate, the bank's return of it, or
    /// the return matched to our pacs.004.
    fn second_entry(&self, s: usize, role: Role) -> Expected {
        use Outcome as O;
        match role {
            Role::ReturnMatched => {
                let by = if self.by_id(s) == "uetr" {
                    "original_uetr"
                } else {
                    "original_end_to_end_id"
                };
                let rtr = vec![format!("RTR-{}-{s}", self.seed)];
                self.expected(s, O::Matched, Some(by), rtr, Some(2))
            }
            _ => {
                let outcome = if role == Role::Duplicate {
                    O::DuplicateTheirs
                } else {
                    O::Returned
                };
                Expected {
                    refers_to: Some(self.e2e(s)),
                    ..self.expected(s, outcome, None, vec![], Some(2))
                }
            }
        }
    }

    /// The item of the group headed by `s`: the itemised entry, the batch, or the
    /// ambiguous set.
    fn group_item(&self, s: usize, role: Role) -> Expected {
        use Outcome as O;
        let g = self.group(s);
        if role == Role::AmbiguousHead {
            let mut theirs: Vec<String> = g.clone().map(|m| self.bank_ref(m, 1)).collect();
            theirs.sort();
            return Expected {
                outcome: O::Ambiguous,
                matched_by: None,
                ours: g.map(|m| self.e2e(m)).collect(),
                theirs,
                refers_to: None,
            };
        }
        let mut ours: Vec<String> = g.map(|m| self.e2e(m)).collect();
        ours.sort();
        if role == Role::SplitHead {
            self.expected(s, O::OneToMany, Some("details"), ours, Some(1))
        } else {
            self.expected(s, O::ManyToOne, Some("batch"), ours, Some(1))
        }
    }

    /// One JSON object a line: `outcome`, `our`, `their`, `matched_by` (the level that
    /// ties the members; `null` for an item of one side), and for a duplicate or a return
    /// `refers_to` (the EndToEndId of the payment it repeats or returns).
    pub(crate) fn write_expected(&self, out: &mut dyn Write) -> io::Result<()> {
        fn list(out: &mut dyn Write, v: &[String]) -> io::Result<()> {
            out.write_all(b"[")?;
            for (i, s) in v.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                // Identifiers of letters, digits and dashes: nothing to escape.
                write!(out, "\"{s}\"")?;
            }
            out.write_all(b"]")
        }
        self.items(&mut |e| {
            write!(out, "{{\"outcome\":\"{}\",\"our\":", e.outcome.as_str())?;
            list(out, &e.ours)?;
            out.write_all(b",\"their\":")?;
            list(out, &e.theirs)?;
            match e.matched_by {
                Some(by) => write!(out, ",\"matched_by\":\"{by}\"")?,
                None => out.write_all(b",\"matched_by\":null")?,
            }
            if let Some(r) = &e.refers_to {
                write!(out, ",\"refers_to\":\"{r}\"")?;
            }
            out.write_all(b"}\n")
        })
    }

    /// The number of items per outcome, in report order (every outcome named).
    pub(crate) fn counts(&self) -> Vec<(Outcome, u64)> {
        let mut c = [0u64; Outcome::ALL.len()];
        let _ = self.items(&mut |e| {
            if let Some(i) = Outcome::ALL.iter().position(|&x| x == e.outcome) {
                c[i] += 1;
            }
            Ok(())
        });
        Outcome::ALL.iter().copied().zip(c).collect()
    }

    pub(crate) fn write_summary(&self, out: &mut dyn Write) -> io::Result<()> {
        let body: Vec<String> = self
            .counts()
            .into_iter()
            .map(|(o, n)| format!("\"{}\":{n}", o.as_str()))
            .collect();
        writeln!(out, "{{{}}}", body.join(","))
    }
}
