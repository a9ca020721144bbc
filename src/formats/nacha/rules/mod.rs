//! The NACHA rules, one file per record type; [`super::Assembler`] drives them in file
//! order and holds what spans records (the open batch, the entry waiting for its addenda,
//! the file's counts).
//!
//! - `check.rs`: [`check::Check`], the findings about one framed record, and the shapes
//!   every rule uses (digits, dates, exact values, a control total against its computed
//!   value);
//! - `file.rs`: file header, file control;
//! - `batch.rs`: batch header (standard, IAT), batch control, the totals they count;
//! - `entry.rs`: entry detail records, by the batch's layout;
//! - `addenda.rs`: addenda records, and an entry's addenda as a whole.

pub(crate) mod addenda;
pub(crate) mod batch;
pub(crate) mod check;
pub(crate) mod entry;
pub(crate) mod file;

#[cfg(test)]
pub(crate) mod testing;
