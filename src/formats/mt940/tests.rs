//! Unit tests of the MT940/MT942 reader.
