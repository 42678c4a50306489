CREATE TABLE IF NOT EXISTS line_items (
    tenant_id bigint,
    id bigint,
    price numeric(10,2) NOT NULL,
    label text,
    PRIMARY KEY (tenant_id, id)
);
