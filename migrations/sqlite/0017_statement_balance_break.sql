-- A statement whose balances do not add up is recorded, marked, instead of refusing its
-- file: which check failed (`closing`: opening + booked entries != closing; `chain`: the
-- opening != the previous statement's closing), what the balance should be and what the
-- statement says, in minor units. NULL: the balances add up or could not be checked.
ALTER TABLE statements ADD COLUMN balance_break TEXT
    CHECK (balance_break = 'closing' OR balance_break = 'chain');
ALTER TABLE statements ADD COLUMN balance_expected_minor INTEGER;
ALTER TABLE statements ADD COLUMN balance_found_minor INTEGER;
-- The run that recorded such statements counts them: it needs attention, whoever reads it
-- (`runs`, `report`, the HTTP service, its webhooks).
ALTER TABLE runs ADD COLUMN unbalanced INTEGER NOT NULL DEFAULT 0;
