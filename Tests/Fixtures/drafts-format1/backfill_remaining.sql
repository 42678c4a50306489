-- Rows that still hold v1 only.
SELECT count(*) FROM drafts WHERE document IS NULL
