//! Pure parsers: bytes in, records with positions out. No database, no async.

pub mod detect;
pub mod iso20022;
pub mod nacha;
