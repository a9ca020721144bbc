//! Operator actions: what an operator decides about a held record
//! (`resolve`), and compensations of postings made in error (`reverse`). Each action is a
//! run of its own (`runs.kind`), in one transaction with its effect, behind the same
//! unique indexes as an ingest:
//! - A decision is insert-first into `decisions`, whose primary key is the held record's
//!   key: of two concurrent decisions one stands, and the other is told which. `post`
//!   inserts the held record under its own key and source (file, record number), so it can
//!   no more post twice than any record can.
//! - A compensation is a new posting (docs/principles.md §10): accounts swapped, key
//!   `{posting_key}:compensate`, source `compensate:{file_id}` + the record number, and
//!   `compensates` naming the posting it reverses (unique). Reversing again inserts
//!   nothing: every posting is journaled as a duplicate of its compensation.

use super::sql;
use crate::ledger::backend::Begin;
use crate::ledger::store::{Arg, Columns, Row, args, bad, checked, col};
use crate::ledger::ts;
use crate::ledger::{During, Ledger, LedgerError, Result, RunInfo};
use chrono::{DateTime, Utc};
use serde::Serialize;

/// A decision on a held record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DecisionKind {
    /// Post it, under its own key.
    Post,
    /// Never post it.
    Reject,
}

impl DecisionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::Post => "post",
            DecisionKind::Reject => "reject",
        }
    }
    fn parse(s: &str) -> Result<Self> {
        match s {
            "post" => Ok(DecisionKind::Post),
            "reject" => Ok(DecisionKind::Reject),
            _ => Err(bad(col!(DECISION, "decision"), "a decision")),
        }
    }
}

/// A decision as journaled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub decision: DecisionKind,
    pub reason: String,
    pub decided_by: String,
    pub decided_at: String,
    /// The run that recorded it (`runs.kind = resolve`).
    pub run_id: i64,
    /// `post`: the posting it made (or found made).
    pub posting_id: Option<i64>,
    /// The held record it was made on.
    pub held_run_id: i64,
    pub held_record_no: i64,
}

impl Decision {
    /// "post by alice at 2026-12-01T…Z (run 7): checked with the originator".
    pub fn describe(&self) -> String {
        format!(
            "{} by {} at {} (run {}): {}",
            self.decision.as_str(),
            self.decided_by,
            self.decided_at,
            self.run_id,
            self.reason
        )
    }
}

/// The posting a held record resembles (a re-sent entry's original).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resembles {
    pub posting_id: i64,
    pub file_id: String,
    pub record_no: i64,
    pub run_id: i64,
}

/// A record the ledger held back, with what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeldRecord {
    pub run_id: i64,
    pub record_no: i64,
    pub file_id: Option<String>,
    pub format: String,
    pub operation: String,
    pub posting_key: String,
    pub trace_number: Option<String>,
    pub debit_account: String,
    pub credit_account: String,
    pub amount_minor: i64,
    pub currency: String,
    pub effective_date: Option<String>,
    pub reason: Option<String>,
    /// When its run started.
    pub held_at: String,
    pub resembles: Option<Resembles>,
    pub decision: Option<Decision>,
    /// Its key posted since (a decision, or the file sent again with `--accept-resent`).
    pub posted_as: Option<i64>,
    #[serde(skip)]
    fingerprint: String,
    #[serde(skip)]
    detail: Option<String>,
}

/// A held record as `sql::held_of_tenant` and `sql::held_of_source` read it (`HELD_COLUMNS`):
/// the journal row (`j`), its run (`r`), the posting it resembles (`o`), a decision on its
/// key (`d`), and the posting its key has now.
const HELD_NAMES: [&str; 29] = [
    "j.run_id",
    "j.record_no",
    "r.file_id",
    "format",
    "operation",
    "posting_key",
    "trace_number",
    "debit_account",
    "credit_account",
    "amount_minor",
    "currency",
    "fingerprint",
    "effective_date",
    "detail",
    "j.reason",
    "started_at",
    "o.posting_id",
    "o.file_id",
    "o.record_no",
    "o.run_id",
    "decision",
    "d.reason",
    "decided_by",
    "decided_at",
    "d.run_id",
    "d.posting_id",
    "held_run_id",
    "held_record_no",
    "posted_as: (SELECT p.posting_id FROM postings p …)",
];
const HELD: Columns = Columns(&HELD_NAMES);

/// `HELD`, and the record's outcome (`sql::journal_record`).
const JOURNAL_RECORD: Columns = Columns(&{
    let mut all = [""; 30];
    let mut i = 0;
    while i < HELD_NAMES.len() {
        all[i] = HELD_NAMES[i];
        i += 1;
    }
    all[29] = "outcome";
    all
});

/// A decision as `sql::DECISION_OF_KEY` reads it.
const DECISION: Columns = Columns(&[
    "decision",
    "reason",
    "decided_by",
    "decided_at",
    "run_id",
    "posting_id",
    "held_run_id",
    "held_record_no",
]);
const _: () = DECISION.check(crate::ledger::sql::DECISION_OF_KEY);

impl HeldRecord {
    /// Waiting for a decision: none made on its key, and the key not posted since.
    pub fn is_open(&self) -> bool {
        self.decision.is_none() && self.posted_as.is_none()
    }

    /// The held record from a row of `HELD_COLUMNS`.
    fn of(r: &Row) -> Result<Self> {
        let resembles = match r.opt_int(col!(HELD, "o.posting_id"))? {
            Some(posting_id) => Some(Resembles {
                posting_id,
                file_id: r.text(col!(HELD, "o.file_id"))?,
                record_no: r.int(col!(HELD, "o.record_no"))?,
                run_id: r.int(col!(HELD, "o.run_id"))?,
            }),
            None => None,
        };
        let decision = match r.opt_text(col!(HELD, "decision"))? {
            Some(d) => Some(Decision {
                decision: DecisionKind::parse(&d)?,
                reason: r.text(col!(HELD, "d.reason"))?,
                decided_by: r.text(col!(HELD, "decided_by"))?,
                decided_at: r.text(col!(HELD, "decided_at"))?,
                run_id: r.int(col!(HELD, "d.run_id"))?,
                posting_id: r.opt_int(col!(HELD, "d.posting_id"))?,
                held_run_id: r.int(col!(HELD, "held_run_id"))?,
                held_record_no: r.int(col!(HELD, "held_record_no"))?,
            }),
            None => None,
        };
        Ok(HeldRecord {
            run_id: r.int(col!(HELD, "j.run_id"))?,
            record_no: r.int(col!(HELD, "j.record_no"))?,
            file_id: r.opt_text(col!(HELD, "r.file_id"))?,
            format: r.text(col!(HELD, "format"))?,
            operation: r.text(col!(HELD, "operation"))?,
            posting_key: r.text(col!(HELD, "posting_key"))?,
            trace_number: r.opt_text(col!(HELD, "trace_number"))?,
            debit_account: r.text(col!(HELD, "debit_account"))?,
            credit_account: r.text(col!(HELD, "credit_account"))?,
            amount_minor: r.int(col!(HELD, "amount_minor"))?,
            currency: r.text(col!(HELD, "currency"))?,
            fingerprint: r.text(col!(HELD, "fingerprint"))?,
            effective_date: r.opt_text(col!(HELD, "effective_date"))?,
            detail: r.opt_text(col!(HELD, "detail"))?,
            reason: r.opt_text(col!(HELD, "j.reason"))?,
            held_at: r.text(col!(HELD, "started_at"))?,
            resembles,
            decision,
            posted_as: r.opt_int(col!(HELD, "posted_as"))?,
        })
    }
}

/// What `resolve` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// Decided now, journaled in run `run`. `found_posted`: `post` found the key already
    /// posted with the same content (posting named in the decision), and posted nothing.
    Decided {
        decision: Decision,
        run: Box<RunInfo>,
        found_posted: bool,
    },
    /// The same decision was made before: nothing done.
    AlreadyResolved(Decision),
    /// The opposite decision was made before: refused.
    Contradicts(Decision),
    /// The record is in the journal, but was not held (a duplicate or a conflict).
    NotHeld { outcome: String },
    /// No such record in the tenant's journal.
    NotFound,
    /// `post` could not post it: what stands in the way (nothing was recorded).
    Refused { why: String },
}

/// What `reverse` compensates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReverseTarget {
    /// Every posting a run made.
    Run(i64),
    /// One posting, by its key (and operation, when the key is not unique without it).
    Key {
        posting_key: String,
        operation: Option<String>,
    },
}

/// What `reverse` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reversal {
    /// Run `run` compensated what it could; the rest was compensated before (duplicates).
    Reversed(Box<RunInfo>),
    /// Nothing to compensate: the run posted nothing, or no posting has that key.
    NothingToReverse,
    /// The key names postings of several operations: `--operation` must say which.
    Ambiguous(Vec<String>),
    /// The postings are compensations themselves: reversing one would move the money
    /// back under a `compensation` label. Refused; post the movement anew instead.
    OfCompensation,
}

/// Who decides, and why.
#[derive(Debug, Clone)]
pub struct Actor<'a> {
    pub tenant: &'a str,
    pub reason: &'a str,
    pub by: &'a str,
    pub at: DateTime<Utc>,
}

impl Ledger {
    /// Every held record of the tenant, in run and record order, with its decision.
    pub async fn held(&mut self, tenant: &str) -> Result<Vec<HeldRecord>> {
        let rows = self
            .store()
            .query(HELD.checked(&sql::held_of_tenant()), &args![tenant])
            .await?;
        rows.iter().map(HeldRecord::of).collect()
    }

    /// The held records of a file's record (`lookup --file-id F --record-no N`).
    pub async fn held_of_source(
        &mut self,
        tenant: &str,
        file_id: &str,
        record_no: i64,
    ) -> Result<Vec<HeldRecord>> {
        let rows = self
            .store()
            .query(
                HELD.checked(&sql::held_of_source()),
                &args![tenant, file_id, record_no],
            )
            .await?;
        rows.iter().map(HeldRecord::of).collect()
    }

    /// Decides on held record `record_no` of run `run_id`: one transaction records the
    /// run, the decision and (`post`) the posting.
    pub async fn resolve(
        &mut self,
        who: &Actor<'_>,
        run_id: i64,
        record_no: i64,
        decision: DecisionKind,
    ) -> Result<Resolution> {
        let held = match self
            .held_to_decide(who, run_id, record_no, decision)
            .await?
        {
            Ok(held) => held,
            Err(answer) => return Ok(answer),
        };
        self.store()
            .begin(Begin::Write)
            .await
            .during("starting the decision's transaction")?;
        let res = self.decide(who, &held, decision).await;
        match res {
            Ok(Ok((run_id, found_posted))) => {
                self.end_run(who.tenant, Ok(run_id)).await?;
                self.decided(who, &held, run_id, found_posted).await
            }
            Ok(Err(lost)) => {
                let _ = self.store().rollback().await;
                Ok(lost)
            }
            Err(e) => {
                let _ = self.store().rollback().await;
                Err(e)
            }
        }
    }

    /// The held record a decision is asked on, or the answer when there is none to make:
    /// not found, not held, decided before, or a decision that cannot be made.
    async fn held_to_decide(
        &mut self,
        who: &Actor<'_>,
        run_id: i64,
        record_no: i64,
        decision: DecisionKind,
    ) -> Result<std::result::Result<HeldRecord, Resolution>> {
        let row = self
            .store()
            .query_opt(
                JOURNAL_RECORD.checked(&sql::journal_record()),
                &args![who.tenant, run_id, record_no],
            )
            .await?;
        let Some(row) = row else {
            const POSTED: Columns = Columns(&["posting_id"]);
            let posted = self
                .store()
                .query_opt(
                    checked!(
                        POSTED,
                        "SELECT posting_id FROM postings WHERE run_id = $1 AND record_no = $2 AND tenant = $3"
                    ),
                    &args![run_id, record_no, who.tenant],
                )
                .await?;
            return Ok(Err(match posted {
                Some(_) => Resolution::NotHeld {
                    outcome: "posted record".to_string(),
                },
                None => Resolution::NotFound,
            }));
        };
        let outcome = row.text(col!(JOURNAL_RECORD, "outcome"))?;
        if outcome != "held" {
            return Ok(Err(Resolution::NotHeld { outcome }));
        }
        // Held by a later run of the same file: the decision is on the key, whichever run
        // is named.
        let held = HeldRecord::of(&row)?;
        if let Some(d) = held.decision.clone() {
            return Ok(Err(earlier(d, decision)));
        }
        Ok(match refusal(&held, decision) {
            Some(why) => Err(Resolution::Refused { why }),
            None => Ok(held),
        })
    }

    /// The decision as committed, with its run read back (a failure here comes after the
    /// commit: [`LedgerError::AfterCommit`]).
    async fn decided(
        &mut self,
        who: &Actor<'_>,
        held: &HeldRecord,
        run_id: i64,
        found_posted: bool,
    ) -> Result<Resolution> {
        let run = self.committed(who.tenant, run_id, false).await?;
        let after = |e| LedgerError::AfterCommit {
            run_id,
            rejected: false,
            source: Box::new(e),
        };
        let d = self
            .decision_of(who.tenant, &held.operation, &held.posting_key)
            .await
            .map_err(after)?
            .ok_or_else(|| after(LedgerError::NoRow))?;
        Ok(Resolution::Decided {
            decision: d,
            run: Box::new(run),
            found_posted,
        })
    }

    /// Inside the transaction: `Ok((run_id, found_posted))` to commit, `Err(resolution)`
    /// to roll back and answer with.
    async fn decide(
        &mut self,
        who: &Actor<'_>,
        held: &HeldRecord,
        decision: DecisionKind,
    ) -> Result<std::result::Result<(i64, bool), Resolution>> {
        let at = ts(&who.at);
        let run_id = self.insert_resolve_run(who, held, decision, &at).await?;
        let a = args![
            who.tenant,
            held.operation.as_str(),
            held.posting_key.as_str(),
            held.run_id,
            held.record_no,
            decision.as_str(),
            who.reason,
            who.by,
            at.as_str(),
            run_id,
        ];
        let claimed = self
            .store()
            .query_opt(sql::INSERT_DECISION, &a)
            .await
            .during("recording the decision")?;
        if claimed.is_none() {
            // Another decision on the same key committed first.
            let d = self
                .decision_of(who.tenant, &held.operation, &held.posting_key)
                .await?
                .ok_or(LedgerError::NoRow)?;
            return Ok(Err(earlier(d, decision)));
        }
        let (mut posted, mut duplicates, mut amount) = (0i64, 0i64, 0i64);
        let mut found_posted = false;
        if decision == DecisionKind::Post {
            let posting_id = match self.post_held(who, held, run_id, &at).await? {
                Ok(Some(id)) => {
                    (posted, amount) = (1, held.amount_minor);
                    id
                }
                Ok(None) => {
                    (found_posted, duplicates) = (true, 1);
                    match self.journal_found_posted(who, held, run_id).await? {
                        Ok(id) => id,
                        Err(refused) => return Ok(Err(refused)),
                    }
                }
                Err(refused) => return Ok(Err(refused)),
            };
            let a = args![
                posting_id,
                who.tenant,
                held.operation.as_str(),
                held.posting_key.as_str()
            ];
            self.store().execute(sql::SET_DECISION_POSTING, &a).await?;
        }
        let finished = ts(&Utc::now());
        let a = args![
            finished.as_str(),
            posted + duplicates,
            posted,
            duplicates,
            amount,
            run_id,
            who.tenant
        ];
        self.store().execute(sql::COMPLETE_ACTION_RUN, &a).await?;
        self.store()
            .execute(sql::ACTION_RUN_TOTALS, &args![who.tenant, run_id])
            .await?;
        crate::fault::point("before_commit");
        Ok(Ok((run_id, found_posted)))
    }

    /// The decision's run (kind `resolve`).
    async fn insert_resolve_run(
        &mut self,
        who: &Actor<'_>,
        held: &HeldRecord,
        decision: DecisionKind,
        at: &str,
    ) -> Result<i64> {
        let source = format!(
            "resolve run {} record {}: {}",
            held.run_id,
            held.record_no,
            decision.as_str()
        );
        let a = args![
            who.tenant,
            held.file_id.as_deref(),
            held.format.as_str(),
            source.as_str(),
            at,
            "resolve",
            who.reason,
            who.by,
        ];
        self.store()
            .query_one(
                checked!(crate::ledger::sql::NEW_RUN, sql::INSERT_ACTION_RUN),
                &a,
            )
            .await?
            .int(col!(crate::ledger::sql::NEW_RUN, "run_id"))
    }

    /// Posts the held record, insert-first: `Ok(Some(posting_id))` when it posted,
    /// `Ok(None)` when a posting took its place (see [`Self::journal_found_posted`]).
    async fn post_held(
        &mut self,
        who: &Actor<'_>,
        held: &HeldRecord,
        run_id: i64,
        at: &str,
    ) -> Result<std::result::Result<Option<i64>, Resolution>> {
        let file_id = held.file_id.clone().unwrap_or_default();
        // The journal keeps a held record's fields as JSON; the posting, compact.
        let detail = crate::keys::detail::encode_json(held.detail.as_deref().unwrap_or_default());
        let fingerprint = crate::ledger::fingerprint_bytes(&held.fingerprint)?;
        let a: [Arg; 15] = args![
            who.tenant,
            held.operation.as_str(),
            held.posting_key.as_str(),
            file_id.as_str(),
            held.record_no,
            held.trace_number.as_deref(),
            held.debit_account.as_str(),
            held.credit_account.as_str(),
            held.amount_minor,
            held.currency.as_str(),
            held.effective_date.as_deref(),
            &fingerprint[..],
            detail.as_slice(),
            run_id,
            at,
        ];
        const INSERTED: Columns = Columns(&["posting_id"]);
        let inserted = self
            .store()
            .query_opt(INSERTED.checked(&sql::insert_decided_posting()), &a)
            .await
            .during("posting the held record")?;
        inserted
            .map(|r| r.int(col!(INSERTED, "posting_id")))
            .transpose()
            .map(Ok)
    }

    /// Insert-first lost: what took the held record's place. The same key with the same
    /// fingerprint is the record posted since (journaled as a duplicate of it); anything
    /// else refuses the decision.
    async fn journal_found_posted(
        &mut self,
        who: &Actor<'_>,
        held: &HeldRecord,
        run_id: i64,
    ) -> Result<std::result::Result<i64, Resolution>> {
        let file_id = held.file_id.clone().unwrap_or_default();
        let a = args![
            who.tenant,
            held.operation.as_str(),
            held.posting_key.as_str(),
            file_id.as_str(),
            held.record_no,
        ];
        const IN_THE_WAY: Columns =
            Columns(&["posting_id", "fingerprint", "run_id", "posting_key"]);
        let other = self
            .store()
            .query_one(checked!(IN_THE_WAY, sql::POSTING_IN_THE_WAY), &a)
            .await?;
        let (id, fingerprint, other_run, key) = (
            other.int(col!(IN_THE_WAY, "posting_id"))?,
            other.fingerprint(col!(IN_THE_WAY, "fingerprint"))?,
            other.int(col!(IN_THE_WAY, "run_id"))?,
            other.text(col!(IN_THE_WAY, "posting_key"))?,
        );
        if key != held.posting_key {
            return Ok(Err(Resolution::Refused {
                why: format!(
                    "record {} of file {file_id} is posting {id} (key {key}, run {other_run}): \
                     one record of a file posts once",
                    held.record_no
                ),
            }));
        }
        if fingerprint != held.fingerprint {
            return Ok(Err(Resolution::Refused {
                why: format!(
                    "its key {key} was posted since with other content (posting {id}, run \
                     {other_run}): a conflict, never posted"
                ),
            }));
        }
        let a = args![run_id, held.record_no, who.tenant, "duplicate", id];
        self.store()
            .execute(
                "INSERT INTO journal (run_id, record_no, tenant, outcome, original_posting_id) \
                 VALUES ($1, $2, $3, $4, $5)",
                &a,
            )
            .await?;
        Ok(Ok(id))
    }

    async fn decision_of(
        &mut self,
        tenant: &str,
        operation: &str,
        posting_key: &str,
    ) -> Result<Option<Decision>> {
        let row = self
            .store()
            .query_opt(
                checked!(DECISION, crate::ledger::sql::DECISION_OF_KEY),
                &args![tenant, operation, posting_key],
            )
            .await?;
        row.map(|r| {
            Ok(Decision {
                decision: DecisionKind::parse(&r.text(col!(DECISION, "decision"))?)?,
                reason: r.text(col!(DECISION, "reason"))?,
                decided_by: r.text(col!(DECISION, "decided_by"))?,
                decided_at: r.text(col!(DECISION, "decided_at"))?,
                run_id: r.int(col!(DECISION, "run_id"))?,
                posting_id: r.opt_int(col!(DECISION, "posting_id"))?,
                held_run_id: r.int(col!(DECISION, "held_run_id"))?,
                held_record_no: r.int(col!(DECISION, "held_record_no"))?,
            })
        })
        .transpose()
    }

    /// Compensates the postings of `target` (docs/principles.md §10): one run, one transaction.
    pub async fn reverse(&mut self, who: &Actor<'_>, target: &ReverseTarget) -> Result<Reversal> {
        const TARGETS: Columns = Columns(&[
            "targets: count(*)",
            "file_id: min(p.file_id)",
            "run_id: min(p.run_id)",
            "compensations: count(p.compensates)",
        ]);
        const FORMAT: Columns = Columns(&["format"]);
        let (cond, binds) = match self.target_condition(who, target).await? {
            Ok(found) => found,
            Err(answer) => return Ok(answer),
        };
        let mut a: Vec<Arg> = vec![Arg::Text(who.tenant)];
        a.extend(binds.iter().map(Bind::arg));
        let counted = self
            .store()
            .query_one(TARGETS.checked(&sql::count_targets(&cond(2))), &a)
            .await?;
        // A run's postings have distinct record numbers, and a key posts once: the
        // compensations' report rows (by record number) cannot collide.
        let targets = counted.int(col!(TARGETS, "targets"))?;
        if targets == 0 {
            return Ok(Reversal::NothingToReverse);
        }
        if counted.int(col!(TARGETS, "compensations"))? > 0 {
            return Ok(Reversal::OfCompensation);
        }
        let (file_id, format_of) = (
            counted.opt_text(col!(TARGETS, "file_id"))?,
            counted.int(col!(TARGETS, "run_id"))?,
        );
        let format = self
            .store()
            .query_one(
                checked!(
                    FORMAT,
                    "SELECT format FROM runs WHERE tenant = $1 AND run_id = $2"
                ),
                &args![who.tenant, format_of],
            )
            .await?
            .text(col!(FORMAT, "format"))?;
        self.store()
            .begin(Begin::Write)
            .await
            .during("starting the compensation's transaction")?;
        let res = self
            .compensate(
                who,
                target,
                &cond,
                &binds,
                file_id.as_deref(),
                &format,
                targets,
            )
            .await;
        let run_id = self.end_run(who.tenant, res).await?;
        let run = self.committed(who.tenant, run_id, false).await?;
        Ok(Reversal::Reversed(Box::new(run)))
    }

    /// The condition on `p` that names the target's postings, its binds numbered from
    /// the `usize` given; or the answer when a key names none or more than one operation.
    async fn target_condition(
        &mut self,
        who: &Actor<'_>,
        target: &ReverseTarget,
    ) -> Result<std::result::Result<(Condition, Vec<Bind>), Reversal>> {
        let by_key = |key: &String, op: &String| -> (Condition, Vec<Bind>) {
            (
                Box::new(|n| format!("p.posting_key = ${n} AND p.operation = ${}", n + 1)),
                vec![Bind::Text(key.clone()), Bind::Text(op.clone())],
            )
        };
        Ok(Ok(match target {
            ReverseTarget::Run(id) => (
                Box::new(|n| format!("p.run_id = ${n}")),
                vec![Bind::Int(*id)],
            ),
            ReverseTarget::Key {
                posting_key,
                operation: None,
            } => {
                const OPERATION: Columns = Columns(&["operation"]);
                let ops = self
                    .store()
                    .query(
                        checked!(
                            OPERATION,
                            "SELECT DISTINCT operation FROM postings WHERE tenant = $1 AND posting_key = $2 \
                             ORDER BY operation"
                        ),
                        &args![who.tenant, posting_key.as_str()],
                    )
                    .await?;
                let ops: Vec<String> = ops
                    .iter()
                    .map(|r| r.text(col!(OPERATION, "operation")))
                    .collect::<Result<_>>()?;
                match ops.as_slice() {
                    [] => return Ok(Err(Reversal::NothingToReverse)),
                    [op] => by_key(posting_key, op),
                    _ => return Ok(Err(Reversal::Ambiguous(ops))),
                }
            }
            ReverseTarget::Key {
                posting_key,
                operation: Some(op),
            } => by_key(posting_key, op),
        }))
    }

    /// The reversal's own run, opened: the row its compensations are posted under.
    async fn open_reverse_run(
        &mut self,
        who: &Actor<'_>,
        target: &ReverseTarget,
        file_id: Option<&str>,
        format: &str,
        at: &str,
    ) -> Result<i64> {
        let source = match target {
            ReverseTarget::Run(id) => format!("reverse run {id}"),
            ReverseTarget::Key { posting_key, .. } => format!("reverse {posting_key}"),
        };
        let a = args![
            who.tenant,
            file_id,
            format,
            source.as_str(),
            at,
            "reverse",
            who.reason,
            who.by,
        ];
        self.store()
            .query_one(
                checked!(crate::ledger::sql::NEW_RUN, sql::INSERT_ACTION_RUN),
                &a,
            )
            .await?
            .int(col!(crate::ledger::sql::NEW_RUN, "run_id"))
    }

    #[allow(clippy::too_many_arguments)]
    async fn compensate(
        &mut self,
        who: &Actor<'_>,
        target: &ReverseTarget,
        cond: &(dyn Fn(usize) -> String + Send + Sync),
        binds: &[Bind],
        file_id: Option<&str>,
        format: &str,
        targets: i64,
    ) -> Result<i64> {
        let at = ts(&who.at);
        let run_id = self
            .open_reverse_run(who, target, file_id, format, &at)
            .await?;
        let mut a: Vec<Arg> = vec![Arg::Text(who.tenant), Arg::Int(run_id), Arg::Text(&at)];
        a.extend(binds.iter().map(Bind::arg));
        self.store()
            .execute(&sql::insert_compensations(who.tenant, &cond(4)), &a)
            .await
            .during("posting the compensations")?;
        let mut a: Vec<Arg> = vec![Arg::Text(who.tenant), Arg::Int(run_id)];
        a.extend(binds.iter().map(Bind::arg));
        let duplicates = self
            .store()
            .execute(&sql::journal_compensated(&cond(3)), &a)
            .await
            .during("journaling what was compensated before")? as i64;
        const POSTED: Columns = Columns(&[
            "posted: count(*)",
            "amount_minor: CAST(coalesce(sum(amount_minor), 0) AS BIGINT)",
        ]);
        let done = self
            .store()
            .query_one(
                checked!(POSTED, sql::POSTED_BY_RUN),
                &args![who.tenant, run_id],
            )
            .await?;
        let (posted, amount) = (
            done.int(col!(POSTED, "posted"))?,
            done.int(col!(POSTED, "amount_minor"))?,
        );
        if posted + duplicates != targets {
            // A posting neither compensated now nor before: something else holds its
            // compensation's key or source. Nothing is committed.
            return Err(LedgerError::CompensationIncomplete {
                targets,
                compensated: posted + duplicates,
            });
        }
        let finished = ts(&Utc::now());
        let a = args![
            finished.as_str(),
            targets,
            posted,
            duplicates,
            amount,
            run_id,
            who.tenant
        ];
        self.store().execute(sql::COMPLETE_ACTION_RUN, &a).await?;
        self.store()
            .execute(sql::ACTION_RUN_TOTALS, &args![who.tenant, run_id])
            .await?;
        crate::fault::point("before_commit");
        Ok(run_id)
    }
}

/// A condition on a posting `p`, its binds numbered from the `usize` given.
type Condition = Box<dyn Fn(usize) -> String + Send + Sync>;

/// An owned bind of a condition built at run time.
enum Bind {
    Int(i64),
    Text(String),
}

impl Bind {
    fn arg(&self) -> Arg<'_> {
        match self {
            Bind::Int(v) => Arg::Int(*v),
            Bind::Text(v) => Arg::Text(v),
        }
    }
}

/// Why `decision` cannot be made on `held`, if it cannot.
fn refusal(held: &HeldRecord, decision: DecisionKind) -> Option<String> {
    if let (DecisionKind::Reject, Some(p)) = (decision, held.posted_as) {
        return Some(format!(
            "its key posted since as posting {p}: a posting is not rejected, it is reversed \
             (`clearledger reverse --key {}`)",
            held.posting_key
        ));
    }
    // Held before migration 0005, which kept no copy of a held record's fields: a posting
    // without them could not be compared, nor found by a later re-send.
    (decision == DecisionKind::Post && held.detail.is_none()).then(|| {
        "held before this version, which kept no copy of its fields: send its file again \
         with --accept-resent to post it"
            .to_string()
    })
}

/// The answer to a decision when `d` was made before.
fn earlier(d: Decision, asked: DecisionKind) -> Resolution {
    if d.decision == asked {
        Resolution::AlreadyResolved(d)
    } else {
        Resolution::Contradicts(d)
    }
}
