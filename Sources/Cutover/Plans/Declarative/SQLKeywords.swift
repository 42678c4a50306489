/// PostgreSQL's keywords as an expression reader needs them.
enum SQLKeywords {
    /// Keywords that cannot name a column or table unquoted (PostgreSQL's reserved,
    /// column-name and type-or-function-name keywords): an identifier spelled like one is quoted.
    static let needsQuoting: Set<String> = [
        "all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric", "authorization", "between",
        "bigint", "binary", "bit", "boolean", "both", "case", "cast", "char", "character", "check", "coalesce",
        "collate", "collation", "column", "concurrently", "constraint", "create", "cross", "current_catalog",
        "current_date", "current_role", "current_schema", "current_time", "current_timestamp", "current_user", "dec",
        "decimal", "default", "deferrable", "desc", "distinct", "do", "else", "end", "except", "exists", "extract",
        "false", "fetch", "float", "for", "foreign", "freeze", "from", "full", "grant", "greatest", "group", "grouping",
        "having", "ilike", "in", "initially", "inner", "inout", "int", "integer", "intersect", "interval", "into", "is",
        "isnull", "join", "json_array", "json_arrayagg", "json_object", "json_objectagg", "lateral", "leading", "least",
        "left", "like", "limit", "localtime", "localtimestamp", "national", "natural", "nchar", "none", "normalize",
        "not", "notnull", "null", "nullif", "numeric", "offset", "on", "only", "or", "order", "out", "outer", "overlaps",
        "overlay", "placing", "position", "precision", "primary", "real", "references", "returning", "right", "row",
        "select", "session_user", "setof", "similar", "smallint", "some", "substring", "symmetric", "system_user",
        "table", "tablesample", "then", "time", "timestamp", "to", "trailing", "treat", "trim", "true", "union",
        "unique", "user", "using", "values", "varchar", "variadic", "verbose", "when", "where", "window", "with",
        "xmlattributes", "xmlconcat", "xmlelement", "xmlexists", "xmlforest", "xmlnamespaces", "xmlparse", "xmlpi",
        "xmlroot", "xmlserialize", "xmltable",
    ]

    /// Words of the expression grammar that are no column reference where they appear bare:
    /// the keywords above and the unreserved ones expressions use (`AT TIME ZONE`,
    /// `character varying`, `interval '1' day`, `IS NORMALIZED`, `LIKE … ESCAPE`).
    static let notColumns: Set<String> = needsQuoting.union([
        "at", "zone", "varying", "without", "escape", "unknown", "day", "hour", "minute", "month", "second", "year",
        "nfc", "nfd", "nfkc", "nfkd", "normalized", "json", "scalar", "keys", "absent", "empty", "error",
    ])

    /// Words that begin a query: an expression over the row holds none.
    static let queryWords: Set<String> = ["select", "values", "table", "insert", "update", "delete"]
}
