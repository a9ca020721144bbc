pub mod nacha;
