-- `reconcile` checks every user's charged total against the sum of their usage records; at a
-- year's 20M records that sum took 15-17 s. The sums are kept here up to a checkpoint (the
-- highest record id known committed with everything below it), so a run adds only the records
-- since, and `reconcile --full` sums them all again. See src/billing/reconcile.ts.
CREATE TABLE reconcile_checkpoint (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  through_id bigint NOT NULL,
  checked_at timestamptz
);
INSERT INTO reconcile_checkpoint (through_id) VALUES (0);

CREATE TABLE reconcile_charges (
  user_id uuid PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  charges_nano bigint NOT NULL
);
