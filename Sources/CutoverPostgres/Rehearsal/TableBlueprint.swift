import Foundation
import PostgresClient

/// How to make a copy of a table in another database of the same server, read from the real
/// table's catalog: its schema, the enums, domains and extensions its columns use, the
/// sequences its defaults draw from, its columns (types, collations, defaults, identity,
/// generated columns, NOT NULL), its constraints, indexes and triggers with their functions.
///
/// A foreign key to another table, row-level security policies and rules are not copied (the
/// scratch database holds the one table); ``notes`` says so for the report.
struct TableBlueprint: Sendable {
    /// The table, schema-qualified and quoted: `public.orders`.
    var table: String
    /// Statements that make the schemas, extensions, types, sequences and the table, before the rows.
    var before: [String]
    /// The columns rows are copied into, quoted, in the table's order: every column that is not generated.
    var copyColumns: [String]
    /// Whether a column is `GENERATED ALWAYS AS IDENTITY` (a copy then overrides it).
    var hasAlwaysIdentity: Bool
    /// Statements that make the constraints, indexes, trigger functions and triggers, and set the
    /// sequences where the real ones stand, after the rows.
    var after: [String]
    /// What was left out, one sentence each.
    var notes: [String]

    /// The blueprint of `table` (as the plan names it) on `connection`, read in one snapshot.
    static func read(table name: String, on connection: PostgresConnection) throws -> TableBlueprint {
        try connection.withTransaction(isolation: .repeatableRead) { connection in
            try connection.execute(unsafeSQL: "SET TRANSACTION READ ONLY")
            guard let found = try connection.query("""
                SELECT c.oid::bigint AS oid, c.relkind::text AS kind, c.oid::regclass::text AS qualified, n.nspname AS schema,
                       c.relpersistence::text AS persistence, array_to_string(c.reloptions, ', ') AS options, c.relrowsecurity AS rls,
                       c.relhasrules AS rules
                  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(\(name))
                """).first else {
                throw RehearsalError.noTable(name)
            }
            let oid = try found.decode(Int64.self, "oid")
            let kind = try found.decode(String.self, "kind")
            guard kind == "r" else { throw RehearsalError.unsupportedTable(name, kind: kind == "p" ? "a partitioned table" : "not an ordinary table") }
            let schema = try found.decode(String.self, "schema")
            // regclass text is unqualified on the search path; the plan's SQL names it qualified.
            let qualified = try connection.query("SELECT format('%I.%I', n.nspname, c.relname) AS q FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = \(oid)::oid")[0].decode(String.self, "q")
            var before: [String] = []
            var after: [String] = []
            var notes: [String] = []
            var schemas = [schema]

            for row in try connection.query("""
                SELECT e.extname, n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
                 WHERE e.extname <> 'plpgsql' ORDER BY e.oid
                """) {
                let extensionSchema = try row.decode(String.self, "nspname")
                schemas.append(extensionSchema)
                before.append("CREATE EXTENSION IF NOT EXISTS \(try connection.quoteIdentifier(try row.decode(String.self, "extname"))) SCHEMA \(try connection.quoteIdentifier(extensionSchema))")
            }
            // Enums and domains the columns use (directly or as an array's element), not an extension's.
            let types = try connection.query("""
                WITH used AS (
                  SELECT DISTINCT coalesce(nullif(t.typelem, 0), t.oid) AS oid FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
                   WHERE a.attrelid = \(oid)::oid AND a.attnum > 0 AND NOT a.attisdropped)
                SELECT t.oid::bigint AS oid, t.typtype::text AS kind, format('%I.%I', n.nspname, t.typname) AS name, n.nspname AS schema,
                       CASE t.typtype WHEN 'e' THEN (SELECT string_agg(quote_literal(e.enumlabel), ', ' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid)
                                      WHEN 'd' THEN format_type(t.typbasetype, t.typtypmod) END AS body,
                       t.typnotnull AS not_null,
                       (SELECT string_agg(pg_get_constraintdef(c.oid), ' ' ORDER BY c.conname) FROM pg_constraint c WHERE c.contypid = t.oid) AS checks
                  FROM used u JOIN pg_type t ON t.oid = u.oid JOIN pg_namespace n ON n.oid = t.typnamespace
                 WHERE t.typtype IN ('e', 'd', 'c') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
                   AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype = 'e')
                 ORDER BY t.typtype DESC, t.oid
                """)
            for row in types {
                let typeName = try row.decode(String.self, "name")
                schemas.append(try row.decode(String.self, "schema"))
                switch try row.decode(String.self, "kind") {
                case "e":
                    before.append("CREATE TYPE \(typeName) AS ENUM (\(try row.decode(String?.self, "body") ?? ""))")
                case "d":
                    let notNull = try row.decode(Bool.self, "not_null") ? " NOT NULL" : ""
                    let checks = try row.decode(String?.self, "checks").map { " \($0)" } ?? ""
                    before.append("CREATE DOMAIN \(typeName) AS \(try row.decode(String?.self, "body") ?? "text")\(notNull)\(checks)")
                default:
                    throw RehearsalError.unsupportedTable(name, kind: "a table with a column of composite type \(typeName)")
                }
            }
            // Sequences the defaults draw from (serial columns' own, or shared ones).
            let sequences = try connection.query("""
                SELECT DISTINCT format('%I.%I', sn.nspname, s.relname) AS name, sn.nspname AS schema,
                       (SELECT format('%I', a.attname) FROM pg_depend o JOIN pg_attribute a ON a.attrelid = o.refobjid AND a.attnum = o.refobjsubid
                         WHERE o.classid = 'pg_class'::regclass AND o.objid = s.oid AND o.refobjid = \(oid)::oid AND o.deptype = 'a') AS owned_by,
                       (SELECT ps.last_value FROM pg_sequences ps WHERE ps.schemaname = sn.nspname AND ps.sequencename = s.relname) AS last_value
                  FROM pg_attrdef ad
                  JOIN pg_depend dep ON dep.classid = 'pg_attrdef'::regclass AND dep.objid = ad.oid
                  JOIN pg_class s ON s.oid = dep.refobjid AND s.relkind = 'S'
                  JOIN pg_namespace sn ON sn.oid = s.relnamespace
                 WHERE ad.adrelid = \(oid)::oid
                """)
            for row in sequences {
                let sequence = try row.decode(String.self, "name")
                schemas.append(try row.decode(String.self, "schema"))
                before.append("CREATE SEQUENCE IF NOT EXISTS \(sequence)")
                if let column = try row.decode(String?.self, "owned_by") { after.append("ALTER SEQUENCE \(sequence) OWNED BY \(qualified).\(column)") }
                if let last = try row.decode(Int64?.self, "last_value") { after.append("SELECT setval('\(sequence)', \(last))") }
            }

            let columns = try connection.query("""
                SELECT format('%I', a.attname) AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null,
                       a.attidentity::text AS identity, a.attgenerated::text AS generated, pg_get_expr(d.adbin, d.adrelid) AS expression,
                       CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation THEN format('%I.%I', cn.nspname, co.collname) END AS collation,
                       (SELECT s.last_value FROM pg_sequences s WHERE a.attidentity <> ''
                           AND format('%I.%I', s.schemaname, s.sequencename) = pg_get_serial_sequence(\(qualified), a.attname)) AS identity_value
                  FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
                  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                  LEFT JOIN pg_collation co ON co.oid = a.attcollation LEFT JOIN pg_namespace cn ON cn.oid = co.collnamespace
                 WHERE a.attrelid = \(oid)::oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum
                """)
            var definitions: [String] = []
            var copyColumns: [String] = []
            var hasAlwaysIdentity = false
            for row in columns {
                let column = try row.decode(String.self, "name")
                var definition = "\(column) \(try row.decode(String.self, "type"))"
                if let collation = try row.decode(String?.self, "collation") { definition += " COLLATE \(collation)" }
                let expression = try row.decode(String?.self, "expression")
                let generated = try row.decode(String.self, "generated")
                switch try row.decode(String.self, "identity") {
                case "a":
                    definition += " GENERATED ALWAYS AS IDENTITY"
                    hasAlwaysIdentity = true
                case "d":
                    definition += " GENERATED BY DEFAULT AS IDENTITY"
                default:
                    if generated == "s", let expression {
                        definition += " GENERATED ALWAYS AS (\(expression)) STORED"
                    } else if let expression {
                        definition += " DEFAULT \(expression)"
                    }
                }
                if try row.decode(Bool.self, "not_null") { definition += " NOT NULL" }
                if let value = try row.decode(Int64?.self, "identity_value") {
                    after.append("SELECT setval(pg_get_serial_sequence('\(qualified)', '\(column.replacingOccurrences(of: "'", with: "''"))'), \(value))")
                }
                definitions.append(definition)
                if generated.isEmpty { copyColumns.append(column) }
            }
            let persistence = try found.decode(String.self, "persistence") == "u" ? "UNLOGGED " : ""
            let options = try found.decode(String?.self, "options").flatMap { $0.isEmpty ? nil : " WITH (\($0))" } ?? ""
            before.append("CREATE \(persistence)TABLE \(qualified) (\n    \(definitions.joined(separator: ",\n    "))\n)\(options)")

            for row in try connection.query("""
                SELECT format('%I', c.conname) AS name, c.contype::text AS kind, pg_get_constraintdef(c.oid) AS definition,
                       c.confrelid::regclass::text AS target, c.confrelid = c.conrelid AS is_self
                  FROM pg_constraint c WHERE c.conrelid = \(oid)::oid AND c.contype IN ('p', 'u', 'c', 'x', 'f')
                 ORDER BY c.contype = 'f', c.contype <> 'p', c.conname
                """) {
                let constraint = try row.decode(String.self, "name")
                if try row.decode(String.self, "kind") == "f", try !row.decode(Bool.self, "is_self") {
                    notes.append("foreign key \(constraint) to \(try row.decode(String.self, "target")) is not copied: the scratch database holds the plan's table only")
                    continue
                }
                after.append("ALTER TABLE \(qualified) ADD CONSTRAINT \(constraint) \(try row.decode(String.self, "definition"))")
            }
            for row in try connection.query("""
                SELECT pg_get_indexdef(i.indexrelid) AS definition FROM pg_index i
                 WHERE i.indrelid = \(oid)::oid AND i.indisvalid
                   AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.conrelid = i.indrelid)
                 ORDER BY i.indexrelid
                """) {
                after.append(try row.decode(String.self, "definition"))
            }
            for row in try connection.query("""
                SELECT format('%I', t.tgname) AS name, pg_get_triggerdef(t.oid) AS definition, t.tgenabled::text AS enabled,
                       pn.nspname AS function_schema, p.oid::regprocedure::text AS function,
                       CASE WHEN pn.nspname NOT IN ('pg_catalog', 'cutover')
                             AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
                            THEN pg_get_functiondef(p.oid) END AS function_definition
                  FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_namespace pn ON pn.oid = p.pronamespace
                 WHERE t.tgrelid = \(oid)::oid AND NOT t.tgisinternal ORDER BY t.tgname
                """) {
                let trigger = try row.decode(String.self, "name")
                if try row.decode(String.self, "function_schema") == "cutover" {
                    notes.append("trigger \(trigger) calls \(try row.decode(String.self, "function")), of another Cutover migration; it is not copied")
                    continue
                }
                if let function = try row.decode(String?.self, "function_definition") {
                    schemas.append(try row.decode(String.self, "function_schema"))
                    after.append(function)
                }
                after.append(try row.decode(String.self, "definition"))
                if try row.decode(String.self, "enabled") == "D" { after.append("ALTER TABLE \(qualified) DISABLE TRIGGER \(trigger)") }
            }
            if try found.decode(Bool.self, "rls") { notes.append("row-level security policies are not copied: the rehearsal reads and writes as the table's owner") }
            if try found.decode(Bool.self, "rules") { notes.append("rules on the table are not copied") }
            var seen = Set<String>()
            let schemaStatements = try schemas.filter { seen.insert($0).inserted && $0 != "public" }
                .map { "CREATE SCHEMA IF NOT EXISTS \(try connection.quoteIdentifier($0))" }
            return TableBlueprint(table: qualified, before: schemaStatements + before, copyColumns: copyColumns,
                                  hasAlwaysIdentity: hasAlwaysIdentity, after: after, notes: notes)
        }
    }
}
