//! The parties of a transaction as its key names them: agents (a BIC, else a clearing
//! system member id, else another id), accounts, names, the file's sender, a return's
//! original parties; each also as the v1 rule read it (agents by BIC only, a return's
//! parties from `OrgnlTxRef` only).

use super::block::Block;
use super::{IsoTx, Kind, State};
use crate::findings::FindingCode;

/// The value of the first leaf `{prefix}/{suffix}` present, for each suffix in order;
/// compares without building the joined path.
fn first_under(b: &Block, prefix: &str, suffixes: &[&str]) -> String {
    for suffix in suffixes {
        for (rel, v, _) in &b.leaves {
            if rel.len() == prefix.len() + 1 + suffix.len()
                && rel.starts_with(prefix)
                && rel.as_bytes()[prefix.len()] == b'/'
                && rel.ends_with(suffix)
            {
                return v.clone();
            }
        }
    }
    String::new()
}

pub(super) fn bic_of(b: &Block, prefix: &str) -> String {
    first_under(b, prefix, &["FinInstnId/BICFI", "FinInstnId/BIC"])
}

/// An agent (`{prefix}/FinInstnId`): its BIC; else its clearing system member id with the
/// system (`USABA:021000021`, the system from `ClrSysId/Cd`, else `ClrSysId/Prtry`; the
/// member id alone when neither is given); else its `Othr/Id`. Empty when none is given.
///
/// A BIC is written in its 8-character form when its branch code is `XXX` (the primary
/// office: `DEUTDEFFXXX` and `DEUTDEFF` are one agent), upper case, so that two systems
/// spelling one bank differently give one key.
pub(super) fn agent_of(b: &Block, prefix: &str) -> String {
    let bic = bic_of(b, prefix);
    if !bic.is_empty() {
        return canonical_bic(&bic);
    }
    let member = first_under(b, prefix, &["FinInstnId/ClrSysMmbId/MmbId"]);
    if !member.is_empty() {
        let system = first_under(
            b,
            prefix,
            &[
                "FinInstnId/ClrSysMmbId/ClrSysId/Cd",
                "FinInstnId/ClrSysMmbId/ClrSysId/Prtry",
            ],
        );
        return if system.is_empty() {
            member
        } else {
            format!("{system}:{member}")
        };
    }
    first_under(b, prefix, &["FinInstnId/Othr/Id"])
}

/// A BIC as `agent_of` names it: upper case, a primary office's `XXX` branch dropped.
pub fn canonical_bic(bic: &str) -> String {
    let up = bic.trim().to_ascii_uppercase();
    match up.strip_suffix("XXX") {
        Some(eight) if up.len() == 11 => eight.to_string(),
        _ => up,
    }
}

fn account_of(b: &Block, prefix: &str) -> String {
    first_under(b, prefix, &["Id/IBAN", "Id/Othr/Id"])
}

fn party_name(b: &Block, prefix: &str) -> String {
    first_under(b, prefix, &["Nm", "Pty/Nm"])
}

/// The file's sender: pain.001, the initiating party's identification, else its name,
/// else the first debtor agent; pacs, the group header's instructing agent, else the
/// transaction's, else its debtor agent. `agent` names an agent (`agent_of`, or `bic_of`
/// for the v1 rule).
pub(super) fn sender_of(
    kind: Kind,
    group: &Block,
    tx: &Block,
    pmtinf: Option<&Block>,
    agent: fn(&Block, &str) -> String,
) -> String {
    match kind {
        Kind::Pain001 => group
            .first(&[
                "InitgPty/Id/OrgId/AnyBIC",
                "InitgPty/Id/OrgId/BICOrBEI",
                "InitgPty/Id/OrgId/Othr/Id",
                "InitgPty/Id/PrvtId/Othr/Id",
                "InitgPty/Nm",
            ])
            .map(|(_, v, _)| v.to_string())
            .or_else(|| pmtinf.map(|p| agent(p, "DbtrAgt")))
            .unwrap_or_default(),
        _ => [agent(group, "InstgAgt"), agent(tx, "InstgAgt")]
            .into_iter()
            .find(|a| !a.is_empty())
            .unwrap_or_else(|| agent(tx, "DbtrAgt")),
    }
}

/// Which side of a payment.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Debtor,
    Creditor,
}

/// The debtor's or creditor's name, account and agent under `{prefix}` of block `b`
/// (`Dbtr`, `DbtrAcct`, `DbtrAgt` or the creditor's), as read now and as the v1 rule read them.
pub(super) fn parties(tx: &mut IsoTx, b: &Block, prefix: &str, side: Side) {
    let (party, account, agent) = match side {
        Side::Debtor => ("Dbtr", "DbtrAcct", "DbtrAgt"),
        Side::Creditor => ("Cdtr", "CdtrAcct", "CdtrAgt"),
    };
    let (party, account, agent) = (
        format!("{prefix}{party}"),
        format!("{prefix}{account}"),
        format!("{prefix}{agent}"),
    );
    let name = party_name(b, &party);
    let acct = account_of(b, &account);
    let (now, bic) = (agent_of(b, &agent), bic_of(b, &agent));
    match side {
        Side::Debtor => {
            tx.v1.debtor_name = name.clone();
            tx.v1.debtor_account = acct.clone();
            tx.v1.debtor_agent = bic;
            (tx.debtor_name, tx.debtor_account, tx.debtor_agent) = (name, acct, now);
        }
        Side::Creditor => {
            tx.v1.creditor_name = name.clone();
            tx.v1.creditor_account = acct.clone();
            tx.v1.creditor_agent = bic;
            (tx.creditor_name, tx.creditor_account, tx.creditor_agent) = (name, acct, now);
        }
    }
}

/// A return's parties (the original payment's): from `RtrChain` when the return has one
/// (pacs.004.001.09 on), else from `OrgnlTxRef`, each element present taking precedence
/// over the other source; a missing agent is the return's instructed agent (debtor side)
/// or instructing agent (creditor side), which they are on a return of a direct payment.
/// A side none of these identifies is an error at its element. The previous rule
/// (`IsoTx::v1`) read `OrgnlTxRef` only, with the BIC of the transaction's agents.
pub(super) fn return_parties(st: &mut State, tx: &mut IsoTx, b: &Block) {
    parties(tx, b, "OrgnlTxRef/", Side::Debtor);
    parties(tx, b, "OrgnlTxRef/", Side::Creditor);
    let v1_instd = bic_of(b, "InstdAgt");
    let v1_instg = bic_of(b, "InstgAgt");
    if tx.v1.debtor_agent.is_empty() {
        tx.v1.debtor_agent = v1_instd;
    }
    if tx.v1.creditor_agent.is_empty() {
        tx.v1.creditor_agent = v1_instg;
    }
    let chain = b.leaves.iter().any(|(p, _, _)| p.starts_with("RtrChain/"));
    if chain {
        let v1 = tx.v1.clone();
        let from_ref = tx.clone();
        parties(tx, b, "RtrChain/", Side::Debtor);
        parties(tx, b, "RtrChain/", Side::Creditor);
        tx.v1 = v1;
        let keep = |now: &mut String, before: &str| {
            if now.is_empty() {
                *now = before.to_string();
            }
        };
        keep(&mut tx.debtor_name, &from_ref.debtor_name);
        keep(&mut tx.debtor_account, &from_ref.debtor_account);
        keep(&mut tx.debtor_agent, &from_ref.debtor_agent);
        keep(&mut tx.creditor_name, &from_ref.creditor_name);
        keep(&mut tx.creditor_account, &from_ref.creditor_account);
        keep(&mut tx.creditor_agent, &from_ref.creditor_agent);
        if tx.debtor_name.is_empty() {
            tx.debtor_name = party_name(b, "RtrChain/InitgPty");
        }
    }
    if tx.debtor_agent.is_empty() {
        tx.debtor_agent = tx.instructed_agent.clone();
    }
    if tx.creditor_agent.is_empty() {
        tx.creditor_agent = tx.instructing_agent.clone();
    }
    let source = if chain { "RtrChain" } else { "OrgnlTxRef" };
    for (side, name, account, agent) in [
        (
            "Dbtr",
            &tx.debtor_name,
            &tx.debtor_account,
            &tx.debtor_agent,
        ),
        (
            "Cdtr",
            &tx.creditor_name,
            &tx.creditor_account,
            &tx.creditor_agent,
        ),
    ] {
        if name.is_empty() && account.is_empty() && agent.is_empty() {
            st.err(
                FindingCode::MissingElement,
                b.pos,
                format!("{}/{source}/{side}", b.path),
                format!(
                    "the original {} ({source}/{side}, {side}Acct or {side}Agt, or the return's {})",
                    if side == "Dbtr" { "debtor" } else { "creditor" },
                    if side == "Dbtr" { "InstdAgt" } else { "InstgAgt" },
                ),
                "none",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::xml::Pos;

    fn block(leaves: &[(&str, &str)]) -> Block {
        Block {
            path: "/x".into(),
            pos: Pos::default(),
            leaves: leaves
                .iter()
                .map(|(p, v)| (p.to_string(), v.to_string(), Pos::default()))
                .collect(),
        }
    }

    #[test]
    fn an_agent_is_its_bic_else_its_clearing_member_id_else_its_other_id() {
        for (leaves, agent) in [
            (
                &[
                    ("DbtrAgt/FinInstnId/BICFI", "COBADEFFXXX"),
                    ("DbtrAgt/FinInstnId/ClrSysMmbId/MmbId", "10040000"),
                ][..],
                // A primary office's BIC11 is its BIC8: one agent, however spelled.
                "COBADEFF",
            ),
            (&[("DbtrAgt/FinInstnId/BIC", "COBADEFF")][..], "COBADEFF"),
            (
                &[("DbtrAgt/FinInstnId/BICFI", "DEUTDEFF500")][..],
                "DEUTDEFF500",
            ),
            (
                &[
                    ("DbtrAgt/FinInstnId/ClrSysMmbId/ClrSysId/Cd", "USABA"),
                    ("DbtrAgt/FinInstnId/ClrSysMmbId/MmbId", "021000021"),
                ][..],
                "USABA:021000021",
            ),
            (
                &[
                    ("DbtrAgt/FinInstnId/ClrSysMmbId/ClrSysId/Prtry", "FEDNOW"),
                    ("DbtrAgt/FinInstnId/ClrSysMmbId/MmbId", "021000021"),
                ][..],
                "FEDNOW:021000021",
            ),
            (
                &[("DbtrAgt/FinInstnId/ClrSysMmbId/MmbId", "021000021")][..],
                "021000021",
            ),
            (
                &[("DbtrAgt/FinInstnId/Othr/Id", "payer-dfsp")][..],
                "payer-dfsp",
            ),
            (&[("CdtrAgt/FinInstnId/BICFI", "INGBNL2AXXX")][..], ""),
        ] {
            assert_eq!(agent_of(&block(leaves), "DbtrAgt"), agent, "{leaves:?}");
        }
        // The v1 rule: the BIC or nothing.
        let aba = block(&[("DbtrAgt/FinInstnId/ClrSysMmbId/MmbId", "021000021")]);
        assert_eq!(bic_of(&aba, "DbtrAgt"), "");
    }
}
