-- E-mail addresses in one normal form (mapwright_store::normalize_email): sign-up, sign-in and
-- `serve --admin` normalise before they touch this table, and this index keeps two spellings of
-- one address from ever being two accounts, whatever writes the row.
--
-- Existing rows: sign-up always trimmed and lower-cased, so a row differs from the normal form
-- at most by ASCII case (a row written by another path), surrounding spaces or a trailing dot on
-- the domain. The oldest account of each address (lowest id) keeps the address in normal form;
-- a newer one that would collide with it is renamed `ADDRESS#duplicate-ID`, which no address
-- normalises to: nobody can sign in as it or sign up over it, and its sites are kept for an
-- operator to merge. Nothing is deleted.
UPDATE users SET email = rtrim(lower(trim(email)), '.') || '#duplicate-' || id
WHERE EXISTS (
    SELECT 1 FROM users older
    WHERE older.id < users.id AND rtrim(lower(trim(older.email)), '.') = rtrim(lower(trim(users.email)), '.')
);
UPDATE users SET email = rtrim(lower(trim(email)), '.')
WHERE email <> rtrim(lower(trim(email)), '.') AND email NOT LIKE '%#duplicate-%';
CREATE UNIQUE INDEX users_email_lower ON users (lower(email));
