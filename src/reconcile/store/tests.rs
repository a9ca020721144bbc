use super::PostingDetail;

#[test]
fn a_posting_detail_reads_the_same_from_either_stored_form() {
    let fields = [
        ("uetr", "ab-cd"),
        ("end_to_end_id", "E \"1\""),
        ("addenda", "799R01\n705X"),
        ("company_name", "ACME"),
        ("not_read", "x"),
    ];
    let compact = crate::keys::detail::encode(&fields);
    let json = crate::keys::detail_json(&fields);
    let a = PostingDetail::read(1, &compact).unwrap();
    let b = PostingDetail::read(1, json.as_bytes()).unwrap();
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    assert_eq!(a.end_to_end_id.as_deref(), Some("E \"1\""));
    assert_eq!(a.addenda.as_deref(), Some("799R01\n705X"));
    assert_eq!(a.instr_id, None);
    // A damaged compact detail names its posting.
    match PostingDetail::read(7, &compact[..4]) {
        Err(crate::ledger::LedgerError::BadDetail { posting_id, .. }) => {
            assert_eq!(posting_id, 7)
        }
        other => panic!("{other:?}"),
    }
}
