//! The file structure: the file header `01`, group header `02`, account identifier `03`
//! and their trailers `49`, `98`, `99`, each in its place.

use super::{Account, FileHeader, GroupHeader, Logical, Place, Reader};
use crate::findings::FindingCode;
use crate::formats::bai2::{FORMAT, kind_of_modifier, lex};
use crate::formats::statement::{Statement, StatementKind};

impl Reader<'_> {
    pub(super) fn file_header(&mut self, rec: &Logical) {
        if self.place != Place::Start {
            self.err(
                FindingCode::RecordOrder,
                rec.at.pos("01"),
                "one 01 file header, first in the file",
                "another 01",
            );
            self.count_records(u64::from(rec.pieces));
            return;
        }
        self.required(rec, 0, "a sender identification");
        self.required(rec, 1, "a receiver identification");
        self.date(rec, 2, "a file creation date");
        let t = rec.trimmed(3);
        if !lex::hhmm(t) {
            // The creation time is not used; NatWest writes `14:59:35`.
            self.warn(
                FindingCode::DateFormat,
                rec.field_pos(3),
                "a file creation time HHMM (0000-2400, 9999)",
                t.to_string(),
            );
        }
        let file_id = self
            .required(rec, 4, "a file identification number")
            .unwrap_or_default();
        let record_length = self
            .count(rec, 5, "a physical record length", true)
            .unwrap_or(0);
        self.count(rec, 6, "a block size", true);
        let version = rec.trimmed(7);
        if version != "2" {
            self.err(
                FindingCode::TagSyntax,
                rec.field_pos(7),
                "version number 2 (BAI2)",
                if version.is_empty() { "blank" } else { version }.to_string(),
            );
        }
        self.no_more_fields(rec, 8);
        self.file = Some(FileHeader {
            file_id,
            record_length: usize::try_from(record_length).unwrap_or(0),
            at: rec.at,
            records: u64::from(rec.pieces),
            groups: 0,
            totals: 0,
        });
        self.place = Place::File;
    }

    /// Closes what is open below the file level, saying which trailer is missing.
    pub(super) fn close_open(&mut self, upto: Place, at: &Logical) {
        if self.place == Place::Account {
            self.err(
                FindingCode::MissingTag,
                at.at.pos(at.code),
                "a 49 account trailer before this record",
                format!("a {} record", at.code),
            );
            self.emit_account();
            self.place = Place::Group;
        }
        if upto == Place::File && self.place == Place::Group {
            self.err(
                FindingCode::MissingTag,
                at.at.pos(at.code),
                "a 98 group trailer before this record",
                format!("a {} record", at.code),
            );
            self.group = None;
            self.place = Place::File;
        }
    }

    pub(super) fn group_header(&mut self, rec: &Logical) {
        self.close_open(Place::File, rec);
        self.required(rec, 1, "an originator identification");
        let originator = rec.trimmed(1);
        let status = rec.trimmed(2);
        match status {
            "1" | "3" => {}
            "2" | "4" => self.err(
                FindingCode::TagSyntax,
                rec.field_pos(2),
                "group status 1 (update) or 3 (correction): 2 (deletion) and 4 (test only) are not posted",
                status.to_string(),
            ),
            _ => self.err(
                FindingCode::TagSyntax,
                rec.field_pos(2),
                "group status 1, 2, 3 or 4",
                status.to_string(),
            ),
        }
        let as_of = self.date(rec, 3, "an as-of date");
        let time = rec.trimmed(4);
        if !time.is_empty() && !lex::hhmm(time) {
            self.err(
                FindingCode::DateFormat,
                rec.field_pos(4),
                "an as-of time HHMM (0000-2400, 9999) or blank",
                time.to_string(),
            );
        }
        let currency = self.currency(rec, 5);
        let modifier = rec.trimmed(6);
        let kind = match kind_of_modifier(modifier) {
            Some(k) => k,
            None => {
                self.err(
                    FindingCode::TagSyntax,
                    rec.field_pos(6),
                    "an as-of-date modifier 1, 2, 3, 4 or blank",
                    modifier.to_string(),
                );
                StatementKind::Final
            }
        };
        self.no_more_fields(rec, 7);
        self.group = Some(GroupHeader {
            originator: (!originator.is_empty()).then(|| originator.to_string()),
            currency,
            as_of,
            sequence: format!("{},{time},{modifier}", rec.trimmed(3)),
            kind,
            records: 0,
            accounts: 0,
            totals: 0,
        });
        self.count_records(u64::from(rec.pieces));
        self.place = Place::Group;
    }

    pub(super) fn account_header(&mut self, rec: &Logical) {
        self.close_open(Place::Group, rec);
        if self.place != Place::Group {
            self.err(
                FindingCode::RecordOrder,
                rec.at.pos("03"),
                "a 03 inside a group (after a 02)",
                "a 03 outside any group",
            );
        }
        let account = self
            .required(rec, 0, "a customer account number")
            .unwrap_or_default();
        let own = self.currency(rec, 1);
        let group = self.group.as_ref();
        let currency = own
            .or_else(|| group.and_then(|g| g.currency.clone()))
            .unwrap_or_else(|| "USD".to_string());
        let kind = group.map_or(StatementKind::Final, |g| g.kind);
        let date = group.and_then(|g| g.as_of);
        let statement = Statement {
            format: FORMAT,
            kind,
            account,
            currency: Some(currency.clone()),
            servicer: group.and_then(|g| g.originator.clone()),
            id: self
                .file
                .as_ref()
                .map(|f| f.file_id.clone())
                .unwrap_or_default(),
            sequence: group.map(|g| g.sequence.clone()),
            date,
            from_date: None,
            to_date: None,
            copy: false,
            balances: Vec::new(),
            entries: Vec::with_capacity(self.entries_hint),
            position: rec.at.pos("03"),
            balance_breaks: Vec::new(),
        };
        let mut acct = Account {
            statement,
            records: 0,
            amounts: 0,
        };
        self.summaries(rec, &mut acct, &currency, date);
        if let Some(g) = self.group.as_mut() {
            g.accounts += 1;
        }
        self.account = Some(acct);
        self.count_records(u64::from(rec.pieces));
        self.place = Place::Account;
    }

    pub(super) fn account_trailer(&mut self, rec: &Logical) {
        if self.place != Place::Account {
            self.err(
                FindingCode::RecordOrder,
                rec.at.pos("49"),
                "a 49 closing an account (after its 03)",
                "a 49 outside any account",
            );
            self.count_records(u64::from(rec.pieces));
            return;
        }
        self.count_records(u64::from(rec.pieces));
        let (amounts, records) = self
            .account
            .as_ref()
            .map_or((0, 0), |a| (a.amounts, a.records));
        let total = self.check_total(
            rec,
            0,
            amounts,
            "the sum of the amounts of the account's 03 and 16 records",
        );
        self.check_count(
            rec,
            1,
            records,
            "records of the account, 03 to 49, 88s included",
        );
        self.no_more_fields(rec, 2);
        if let Some(g) = self.group.as_mut() {
            g.totals += total.map_or(amounts, i128::from);
        }
        self.emit_account();
        self.place = Place::Group;
    }

    pub(super) fn group_trailer(&mut self, rec: &Logical) {
        self.close_open(Place::Group, rec);
        if self.place != Place::Group {
            self.err(
                FindingCode::RecordOrder,
                rec.at.pos("98"),
                "a 98 closing a group (after its 02)",
                "a 98 outside any group",
            );
            self.count_records(u64::from(rec.pieces));
            return;
        }
        self.count_records(u64::from(rec.pieces));
        let (totals, accounts, records) = self
            .group
            .as_ref()
            .map_or((0, 0, 0), |g| (g.totals, g.accounts, g.records));
        let total = self.check_total(rec, 0, totals, "the sum of the group's 49 control totals");
        self.check_count(rec, 1, accounts, "accounts in the group");
        self.check_count(
            rec,
            2,
            records,
            "records of the group, 02 to 98, 88s included",
        );
        self.no_more_fields(rec, 3);
        if let Some(f) = self.file.as_mut() {
            f.totals += total.map_or(totals, i128::from);
            f.groups += 1;
        }
        self.group = None;
        self.place = Place::File;
    }

    pub(super) fn file_trailer(&mut self, rec: &Logical) {
        self.close_open(Place::File, rec);
        self.count_records(u64::from(rec.pieces));
        let (totals, groups, records) = self
            .file
            .as_ref()
            .map_or((0, 0, 0), |f| (f.totals, f.groups, f.records));
        self.check_total(rec, 0, totals, "the sum of the file's 98 control totals");
        self.check_count(rec, 1, groups, "groups in the file");
        self.check_count(
            rec,
            2,
            records,
            "records of the file, 01 to 99, 88s included",
        );
        self.no_more_fields(rec, 3);
        self.place = Place::End;
    }
}
