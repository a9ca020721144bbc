//! The rule-set of a reconciliation (`reconcile --rules FILE`): a small TOML file of day
//! windows, tolerances with priorities, and where corrections post. Amounts are integer
//! minor units of the item's currency; every field has a default, so an empty file (or no
//! `--rules`) is the strict rule-set: exact amounts, the default day window.
//!
//! ```toml
//! expected_days = 3          # ours without theirs is `expected`, not `missing_theirs`,
//!                            # until this many days after its date (as of the period end)
//! days_before = 1            # the bank may book up to this many days before our date …
//! days_after = 3             # … or after it, and still be on time
//! max_members = 3            # the bounded N:M search: at most this many on the many side
//! max_candidates = 12        # … chosen among at most this many candidates
//!
//! [[tolerance]]              # tried by priority (lowest first), then by name
//! name = "sepa-fee"          # labels the item it admits (matched_within_tolerance)
//! priority = 10
//! currency = "EUR"           # optional: only items in this currency
//! below_minor = 250          # the bank may book up to 2.50 less than we posted …
//! above_minor = 0            # … and nothing more (asymmetric)
//! bps = 0                    # plus this many basis points of our amount, either way
//!
//! [corrections]
//! ledger_account = "acct:NL26VAYB8060476890"  # default: the item's own mapped account
//! suspense_account = "suspense:NL26VAYB8060476890"  # default: suspense:{bank account}
//! ```
//!
//! The hash of a rule-set ([`Rules::hash`]) is part of a reconciliation run's identity. It
//! is taken over the rules as read (defaults filled in, tolerances in priority order),
//! never the file's bytes: a comment or a reordered key does not make a new run.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The longest day window or `expected_days` a rule-set may set (ten years).
pub const MAX_DAYS: u32 = 3660;

/// A reconciliation's rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Rules {
    /// Days past its date a posting the bank has not booked is `expected`; after, it is
    /// `missing_theirs`.
    pub expected_days: u32,
    /// Days an entry may be dated before the posting and still match it.
    pub days_before: u32,
    /// Days an entry may be dated after the posting and still match it.
    pub days_after: u32,
    /// The largest set of postings or entries the `amount_sum` search combines.
    pub max_members: u32,
    /// The most postings (same currency and sign, within the day window) the `amount_sum`
    /// search combines from.
    pub max_candidates: u32,
    /// The amount differences admitted, each by name (`[[tolerance]]` in the rules file).
    #[serde(rename = "tolerance")]
    pub tolerances: Vec<Tolerance>,
    /// Where `--post-corrections` posts.
    pub corrections: Corrections,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            expected_days: 3,
            days_before: 1,
            days_after: 3,
            max_members: 3,
            max_candidates: 12,
            tolerances: Vec::new(),
            corrections: Corrections::default(),
        }
    }
}

/// An amount difference a rule admits: Δ = theirs − ours, in minor units.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tolerance {
    /// The label an item admitted by it carries (`matched_within_tolerance`, and groups').
    pub name: String,
    /// The order tolerances are tried in, lowest first (then by name): the first that
    /// admits Δ labels the item.
    #[serde(default)]
    pub priority: i64,
    /// The ISO 4217 currency it applies to; `None` for every currency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// The bank may book up to this much less than we posted (Δ < 0).
    #[serde(default)]
    pub below_minor: i64,
    /// The bank may book up to this much more (Δ > 0).
    #[serde(default)]
    pub above_minor: i64,
    /// Basis points of our amount, added to both bounds.
    #[serde(default)]
    pub bps: i64,
}

impl Tolerance {
    /// Whether Δ (`delta`, theirs − ours) on our amount `ours` in `currency` is admitted.
    pub fn admits(&self, currency: &str, ours: i64, delta: i64) -> bool {
        if self.currency.as_deref().is_some_and(|c| c != currency) {
            return false;
        }
        // i128: a basis-point share of an amount near i64::MAX must not overflow.
        let relative = (i128::from(ours).abs() * i128::from(self.bps)) / 10_000;
        let d = i128::from(delta);
        if d < 0 {
            -d <= i128::from(self.below_minor) + relative
        } else {
            d <= i128::from(self.above_minor) + relative
        }
    }
}

/// Where `--post-corrections` posts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Corrections {
    /// The mapped ledger account a correction moves; `None`: the item's first posting's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger_account: Option<String>,
    /// The account a correction's other leg posts to; `None`: `suspense:{bank account}`.
    /// It must not be mapped to the bank account.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suspense_account: Option<String>,
}

/// Why a rules file was refused.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// The file is not TOML of the rule-set's shape (an unknown key, a wrong type).
    #[error("{path}: {message}")]
    Toml {
        /// The rules file, as named to [`Rules::parse`].
        path: String,
        /// toml's message: the line and column, what was expected and found.
        message: String,
    },
    /// A value is out of range (a day window past [`MAX_DAYS`], a negative tolerance, two
    /// tolerances of one name, …).
    #[error("{path}: {message}")]
    Invalid {
        /// The rules file, as named to [`Rules::parse`].
        path: String,
        /// Which value, what was expected and what was found.
        message: String,
    },
}

impl Rules {
    /// Reads a rules file's text (`path` names it in errors).
    pub fn parse(path: &str, text: &str) -> Result<Rules, RulesError> {
        let mut r: Rules = toml::from_str(text).map_err(|e| RulesError::Toml {
            path: path.to_string(),
            // toml's message names the line and column, what was expected and found.
            message: e.to_string().trim_end().replace('\n', " | "),
        })?;
        let invalid = |message: String| RulesError::Invalid {
            path: path.to_string(),
            message,
        };
        for (field, v) in [
            ("expected_days", r.expected_days),
            ("days_before", r.days_before),
            ("days_after", r.days_after),
        ] {
            if v > MAX_DAYS {
                return Err(invalid(format!(
                    "{field}: expected 0 to {MAX_DAYS} days, found {v}"
                )));
            }
        }
        if r.max_members == 0 || r.max_members > 6 {
            return Err(invalid(format!(
                "max_members: expected 1 to 6, found {}",
                r.max_members
            )));
        }
        if r.max_candidates == 0 || r.max_candidates > 24 {
            return Err(invalid(format!(
                "max_candidates: expected 1 to 24, found {}",
                r.max_candidates
            )));
        }
        let mut names = std::collections::HashSet::new();
        for (i, t) in r.tolerances.iter().enumerate() {
            let at = format!("tolerance[{}] ({:?})", i + 1, t.name);
            if t.name.trim().is_empty() {
                return Err(invalid(format!(
                    "tolerance[{}].name: expected a name, found an empty one",
                    i + 1
                )));
            }
            if !names.insert(t.name.clone()) {
                return Err(invalid(format!("{at}: a second tolerance of this name")));
            }
            for (field, v) in [
                ("below_minor", t.below_minor),
                ("above_minor", t.above_minor),
                ("bps", t.bps),
            ] {
                if v < 0 {
                    return Err(invalid(format!(
                        "{at}.{field}: expected 0 or more, found {v}"
                    )));
                }
            }
            if let Some(c) = &t.currency
                && crate::money::minor_exponent(c).is_none()
            {
                return Err(invalid(format!(
                    "{at}.currency: expected an ISO 4217 code, found {c:?}"
                )));
            }
        }
        r.tolerances
            .sort_by(|a, b| (a.priority, &a.name).cmp(&(b.priority, &b.name)));
        Ok(r)
    }

    /// The rule-set's identity: sha256 of its canonical JSON (defaults filled in,
    /// tolerances in priority order), hex.
    pub fn hash(&self) -> String {
        hex::encode(Sha256::digest(self.canonical().as_bytes()))
    }

    /// The canonical JSON the hash is of, as a run stores it (`reconciliations.rules`).
    pub fn canonical(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The rules a run stored ([`Rules::canonical`]), when their hash is `hash`: `None`
    /// for anything else (no rules stored, or not these).
    pub fn from_stored(json: &str, hash: &str) -> Option<Rules> {
        let r: Rules = serde_json::from_str(json).ok()?;
        (r.hash() == hash).then_some(r)
    }

    /// The first tolerance (by priority) that admits Δ.
    pub fn tolerance(&self, currency: &str, ours: i64, delta: i64) -> Option<&Tolerance> {
        self.tolerances
            .iter()
            .find(|t| t.admits(currency, ours, delta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_file_is_the_default_rule_set() {
        let r = Rules::parse("r.toml", "").unwrap();
        assert_eq!(r, Rules::default());
        assert_eq!(r.hash(), Rules::default().hash());
    }

    #[test]
    fn tolerances_sort_by_priority_and_the_hash_ignores_layout() {
        let a = Rules::parse(
            "a.toml",
            "days_after = 5\n[[tolerance]]\nname = \"b\"\npriority = 2\nabove_minor = 5\n\
             [[tolerance]]\nname = \"a\"\npriority = 1\nbelow_minor = 250\ncurrency = \"EUR\"\n",
        )
        .unwrap();
        let b = Rules::parse(
            "b.toml",
            "# the same rules\n[[tolerance]]\npriority = 1\nname = \"a\"\ncurrency = \"EUR\"\nbelow_minor = 250\n\
             [[tolerance]]\nname = \"b\"\nabove_minor = 5\npriority = 2\n\ndays_after = 5\n",
        );
        // TOML puts `days_after` after a table into that table: refused, by name.
        assert!(b.is_err());
        let b = Rules::parse(
            "b.toml",
            "days_after = 5 # later\n[[tolerance]]\npriority = 1\nname = \"a\"\ncurrency = \"EUR\"\nbelow_minor = 250\n\
             [[tolerance]]\nname = \"b\"\nabove_minor = 5\npriority = 2\n",
        )
        .unwrap();
        assert_eq!(a.tolerances[0].name, "a");
        assert_eq!(a.hash(), b.hash());
        assert_ne!(a.hash(), Rules::default().hash());
        // Δ = −250 EUR: "a" admits it; Δ = −251 nothing; Δ = +5 in USD: "b".
        assert_eq!(a.tolerance("EUR", 10_000, -250).unwrap().name, "a");
        assert!(a.tolerance("EUR", 10_000, -251).is_none());
        assert_eq!(a.tolerance("USD", 10_000, 5).unwrap().name, "b");
        assert!(a.tolerance("USD", 10_000, -1).is_none());
    }

    #[test]
    fn basis_points_widen_both_bounds() {
        let t = Tolerance {
            name: "t".into(),
            priority: 0,
            currency: None,
            below_minor: 0,
            above_minor: 1,
            bps: 10,
        };
        // 10 bp of 100 000 is 100.
        assert!(t.admits("USD", 100_000, -100));
        assert!(!t.admits("USD", 100_000, -101));
        assert!(t.admits("USD", 100_000, 101));
        assert!(!t.admits("USD", 100_000, 102));
        assert!(t.admits("USD", i64::MAX, -(i64::MAX / 1000)));
    }

    #[test]
    fn bad_files_say_where_and_what() {
        let e = Rules::parse("r.toml", "expected_days = \"three\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("r.toml: "), "{e}");
        assert!(e.contains("line 1"), "{e}");
        let e = Rules::parse("r.toml", "colour = 1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `colour`"), "{e}");
        let e = Rules::parse("r.toml", "[[tolerance]]\nname = \"x\"\nbps = -1\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "r.toml: tolerance[1] (\"x\").bps: expected 0 or more, found -1"
        );
        let e = Rules::parse(
            "r.toml",
            "[[tolerance]]\nname = \"x\"\ncurrency = \"EUX\"\n",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "r.toml: tolerance[1] (\"x\").currency: expected an ISO 4217 code, found \"EUX\""
        );
        let e = Rules::parse("r.toml", "days_after = 4000000000\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "r.toml: days_after: expected 0 to 3660 days, found 4000000000"
        );
        let e = Rules::parse("r.toml", "max_members = 9\n")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "r.toml: max_members: expected 1 to 6, found 9");
    }
}
