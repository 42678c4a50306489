SELECT count(*) AS n FROM drafts WHERE id LIKE 'draft-new-%' AND document IS NULL;
