//! The integration tests: one binary, one module per area, helpers in `common`.
//!
//! One binary rather than one per file: each integration-test binary links the whole
//! crate, so twenty-nine of them made every change to `src/` link twenty-nine times. None of
//! these tests sets process-wide state (environment, working directory, signal handlers,
//! global thread pools): what must run in a process of its own (a crash, a fault point, a
//! server) runs the `clearledger` binary as a child, so the modules share this process safely.

// A test reads as one scenario, top to bottom; the crate's functions fit a screen.
#![allow(clippy::too_many_lines)]

#[macro_use]
mod common;

mod accounts;
mod api_conformance;
mod citus;
mod config;
mod console;
mod corpus;
mod corpus_list;
mod crash;
mod detect;
mod distributable;
mod docs;
mod fuzz_smoke;
mod hardening;
mod hostile;
mod http_faults;
mod inbox;
mod ingest;
mod iso;
mod logs;
mod nacha_rules;
mod operator;
mod operator_views;
mod output;
mod postgres;
mod reconcile;
mod reconcile_generated;
mod resent;
mod schema_parity;
mod serve;
mod serve_load;
mod serve_standards;
mod small;
mod soak;
mod statement_balances;
mod statement_corpus;
mod statement_refs;
mod statements;
mod tenants;
mod upgrade;
mod webhooks;
