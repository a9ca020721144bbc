//! A logical record complete: counted, dispatched by its code, its field values read
//! (required fields, dates, currencies, amounts, counts), each fault a finding.

use super::{FileHeader, Logical, Place, RECORD_LENGTH_DEFAULT, Reader};
use crate::findings::FindingCode;
use crate::formats::bai2::lex::{self, AmountError};
use chrono::NaiveDate;

impl Reader<'_> {
    pub(super) fn record_length(&self) -> usize {
        match self.file.as_ref().map(|f| f.record_length) {
            Some(n) if n > 0 => n,
            _ => RECORD_LENGTH_DEFAULT,
        }
    }

    /// Counts `n` physical records in every open level (file, group, account).
    pub(super) fn count_records(&mut self, n: u64) {
        if let Some(f) = self.file.as_mut() {
            f.records += n;
        }
        if let Some(g) = self.group.as_mut() {
            g.records += n;
        }
        if let Some(a) = self.account.as_mut() {
            a.records += n;
        }
    }

    pub(super) fn finish_pending(&mut self) {
        let Some(rec) = self.pending.take() else {
            return;
        };
        self.finish_record(&rec);
        self.spare = Some(rec);
    }

    pub(super) fn finish_record(&mut self, rec: &Logical) {
        if self.place == Place::End {
            if !self.after_99_reported {
                self.after_99_reported = true;
                self.err(
                    FindingCode::RecordOrder,
                    rec.at.pos(rec.code),
                    "nothing after the 99 file trailer",
                    format!("a {} record", rec.code),
                );
            }
            return;
        }
        if self.place == Place::Start && rec.code != "01" {
            self.err(
                FindingCode::MissingTag,
                rec.at.pos(rec.code),
                "a 01 file header first",
                format!("a {} record", rec.code),
            );
            // Read on as if the header were there, to find what else is wrong.
            self.file = Some(FileHeader {
                at: rec.at,
                ..FileHeader::default()
            });
            self.place = Place::File;
        }
        match rec.code {
            "01" => self.file_header(rec),
            "02" => self.group_header(rec),
            "03" => self.account_header(rec),
            "16" => self.detail(rec),
            "49" => self.account_trailer(rec),
            "98" => self.group_trailer(rec),
            "99" => self.file_trailer(rec),
            _ => {}
        }
    }

    /// Non-empty fields past the `n` a record has.
    pub(super) fn no_more_fields(&mut self, rec: &Logical, n: usize) {
        if let Some(i) = (n..rec.fields.len()).find(|&i| !rec.trimmed(i).is_empty()) {
            self.err(
                FindingCode::TagSyntax,
                rec.field_pos(i),
                format!("the end of the {} record ({n} fields)", rec.code),
                rec.field(i).to_string(),
            );
        }
    }

    pub(super) fn required(&mut self, rec: &Logical, i: usize, what: &str) -> Option<String> {
        let v = rec.trimmed(i);
        if v.is_empty() {
            self.err(
                FindingCode::TagSyntax,
                rec.field_pos(i),
                what.to_string(),
                "blank",
            );
            None
        } else {
            Some(v.to_string())
        }
    }

    pub(super) fn date(&mut self, rec: &Logical, i: usize, what: &str) -> Option<NaiveDate> {
        let v = rec.trimmed(i);
        let d = lex::yymmdd(v);
        if d.is_none() {
            self.err(
                FindingCode::DateFormat,
                rec.field_pos(i),
                format!("{what} (YYMMDD, a calendar date)"),
                v.to_string(),
            );
        }
        d
    }

    pub(super) fn currency(&mut self, rec: &Logical, i: usize) -> Option<String> {
        let v = rec.trimmed(i);
        if v.is_empty() {
            return None;
        }
        if let Err(e) = crate::money::Currency::parse(v) {
            self.err(
                FindingCode::CurrencyCode,
                rec.field_pos(i),
                format!("an ISO 4217 currency code with minor units ({e})"),
                v.to_string(),
            );
        }
        Some(v.to_string())
    }

    /// A signed or unsigned amount field; `None` when blank (or wrong: the finding is
    /// pushed).
    pub(super) fn amount(
        &mut self,
        rec: &Logical,
        i: usize,
        signed: bool,
        what: &str,
    ) -> Option<i64> {
        let v = rec.trimmed(i);
        if v.is_empty() {
            return None;
        }
        match lex::amount(v, signed) {
            Ok(a) => Some(a),
            Err(e) => {
                let (code, expected) = match e {
                    AmountError::Syntax if signed => (
                        FindingCode::AmountFormat,
                        format!("{what}: digits with an optional sign, no decimal point"),
                    ),
                    AmountError::Syntax => (
                        FindingCode::AmountFormat,
                        format!("{what}: digits, no sign and no decimal point"),
                    ),
                    AmountError::Overflow => (
                        FindingCode::AmountOverflow,
                        format!("{what}: at most 18 digits"),
                    ),
                };
                self.err(code, rec.field_pos(i), expected, v.to_string());
                None
            }
        }
    }

    /// A count field; `None` when blank (with `blank_ok`) or wrong (finding pushed).
    pub(super) fn count(
        &mut self,
        rec: &Logical,
        i: usize,
        what: &str,
        blank_ok: bool,
    ) -> Option<u64> {
        let v = rec.trimmed(i);
        if v.is_empty() && blank_ok {
            return None;
        }
        let c = lex::count(v);
        if c.is_none() {
            self.err(
                FindingCode::TagSyntax,
                rec.field_pos(i),
                format!("{what} (digits)"),
                if v.is_empty() {
                    "blank".to_string()
                } else {
                    v.to_string()
                },
            );
        }
        c
    }
}
