import Cutover
import PostgresClient

/// The functions a ``PostgresRecordStore`` sends its saves to, as the plan's registration names
/// them (`cutover.make_record_save`): each writer path's own function, which takes the key's and
/// the path's columns as text parameters in the registered order, and the plan's
/// `save_record_<plan>`, which takes them as JSON.
struct RecordSaveFunctions: Sendable {
    /// One writer path's function: its call and the order of its parameters.
    struct PathFunction: Sendable, Equatable {
        /// `SELECT outcome, revision FROM cutover.save_modern_<plan>($1, …, $n)`.
        let sql: String
        /// For each registered key column in turn, its index in the entity's key.
        let keyOrder: [Int]
        /// The path's columns in the registered order.
        let columns: [String]

        /// The call's parameters for one save: scope, operation ID, the key's parts, the
        /// expected revision, the path's column values (each as text, which the function reads
        /// as its column's type), the canonical request and the lock timeout; nil when the write
        /// is not exactly this path's columns.
        func binds(scope: String, operationID: String, key: RecordKey, expected: Int64,
                   write: [String: RecordColumnValue], request: [UInt8], lockTimeout: PostgresBind) -> [PostgresBind]? {
            guard write.count == columns.count else { return nil }
            var binds: [PostgresBind] = []
            binds.reserveCapacity(5 + keyOrder.count + columns.count)
            binds.append(scope.postgresBind)
            binds.append(operationID.postgresBind)
            for index in keyOrder {
                switch key.parts[index] {
                case .bigint(let value): binds.append(PostgresBind(text: String(value)))
                case .text(let text): binds.append(PostgresBind(text: text))
                case .uuid: binds.append(PostgresBind(text: key.parts[index].description))
                }
            }
            binds.append(expected.postgresBind)
            for column in columns {
                guard let value = write[column] else { return nil }
                switch value {
                case .null: binds.append(.null)
                case .text(let text): binds.append(PostgresBind(text: text))
                case .integer(let integer): binds.append(PostgresBind(text: String(integer)))
                case .boolean(let boolean): binds.append(PostgresBind(text: boolean ? "true" : "false"))
                }
            }
            binds.append(PostgresBind(bytea: request))
            binds.append(lockTimeout)
            return binds
        }
    }

    /// The call of `save_record_<plan>` (``RecordSaveSender/saveSQL``'s parameters without
    /// the plan), or nil to call `cutover.save_record`.
    var ownSQL: String?
    var legacy: PathFunction?
    var modern: PathFunction?

    static let none = RecordSaveFunctions(ownSQL: nil, legacy: nil, modern: nil)

    /// The function of `path`, if it has one.
    subscript(path: SavePath) -> PathFunction? {
        get { path == .legacy ? legacy : modern }
        set { if path == .legacy { legacy = newValue } else { modern = newValue } }
    }

    /// The registration of plan `plan` as `connection` reads it, for an entity keyed by
    /// `keyColumns`; ``none`` when the plan has no registration or the role may not read it
    /// (sql/roles/grant_application.sql grants it).
    static func read(plan: String, keyColumns: [String], on connection: PostgresConnection,
                     logger: CutoverLogger) throws -> RecordSaveFunctions {
        let names: PostgresRow
        let lists: PostgresRows
        do {
            guard let row = try connection.query("""
                SELECT save_function, legacy_save_function, modern_save_function FROM cutover.record_plans WHERE plan = \(plan)
                """).first else { return .none }
            names = row
            lists = try connection.query("""
                SELECT l.part, c.name FROM cutover.record_plans e
                 CROSS JOIN LATERAL (VALUES ('key', e.key_columns), ('legacy', e.legacy_columns), ('modern', e.modern_columns)) AS l(part, names)
                 CROSS JOIN LATERAL unnest(l.names) WITH ORDINALITY AS c(name, n)
                 WHERE e.plan = \(plan) ORDER BY l.part, c.n
                """)
        } catch let error as PostgresError where error.sqlState == .insufficientPrivilege {
            logger.log(.notice, "record store: the role may not read the plan's registration; saves call cutover.save_record",
                       metadata: ["plan": plan])
            return .none
        }
        var parts: [String: [String]] = [:]
        for row in lists { parts[try row.decode(String.self, "part"), default: []].append(try row.decode(String.self, "name")) }
        // Every registered key column is one of the entity's; otherwise no path's function fits.
        let keyOrder = (parts["key"] ?? []).compactMap { keyColumns.firstIndex(of: $0) }
        let keyFits = keyOrder.count == keyColumns.count && parts["key"]?.count == keyColumns.count
        func path(_ column: String, _ part: String) throws -> PathFunction? {
            guard keyFits, let name = try names.decode(String?.self, column).flatMap(Self.ownName),
                  let columns = parts[part], !columns.isEmpty else { return nil }
            let count = 5 + keyOrder.count + columns.count
            let parameters = (1...count).map { "$\($0)" }.joined(separator: ", ")
            return PathFunction(sql: "SELECT outcome, revision FROM \(name)(\(parameters))", keyOrder: keyOrder, columns: columns)
        }
        return RecordSaveFunctions(
            ownSQL: try names.decode(String?.self, "save_function").flatMap(Self.ownName).map {
                "SELECT outcome, revision FROM \($0)($1, $2, $3, $4, $5, $6, $7, $8)"
            },
            legacy: try path("legacy_save_function", "legacy"),
            modern: try path("modern_save_function", "modern"))
    }

    /// `name` when make_record_save could have made it: `cutover.` and lower-case letters,
    /// digits and underscores, so that it can be written into a statement as it is.
    private static func ownName(_ name: String) -> String? {
        guard name.hasPrefix("cutover.save_"),
              name.utf8.dropFirst("cutover.".utf8.count).allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F })
        else { return nil }
        return name
    }

    /// Whether `error`, from a call of one of these functions, means the call never ran as made
    /// (the function is gone or not granted, or its table changed by hand under it), so that the
    /// same save may go through another function: the transaction rolled back whole, claim
    /// included.
    static func isOutOfDate(_ error: PostgresError) -> Bool {
        switch error.sqlState {
        case .undefinedFunction?, .insufficientPrivilege?, .undefinedColumn?, .undefinedTable?: true
        default: false
        }
    }
}
