/// A declarative migration plan, `plan.json` format 2: a table, its key and a list of
/// operations, from which ``compile()`` generates every statement of every step.
///
/// ```json
/// {
///   "format": 2,
///   "name": "orders-status-code",
///   "table": "public.orders",
///   "key": "id",
///   "operations": [
///     {"alter_column": {"from": "status",
///                       "to": {"name": "status_code", "type": "smallint", "notNull": true},
///                       "up": "CASE status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 WHEN 'shipped' THEN 3 END",
///                       "down": "CASE status_code WHEN 1 THEN 'new' WHEN 2 THEN 'paid' WHEN 3 THEN 'shipped' END"}}
///   ]
/// }
/// ```
///
/// Keys (required unless marked optional; no other key is accepted, anywhere):
/// - `format`: 2. `name` and `modernWriterWindow` (optional, default `10m`) as in format 1
///   (``MigrationPlan``); `legacyApplicationPattern` (optional) as in format 1, but `legacy-%`
///   when not given, so that contract's check for legacy sessions always runs.
/// - `table`: `name` or `schema.name`, each part 1 to 63 bytes (``QualifiedName/init(planText:)``).
/// - `key`: the column, or the list of 1 to 32 columns, of a unique key the backfill walks in
///   order (the primary key, usually), of any orderable type.
/// - `revision` (optional): the `bigint` column that the record store (`cutover.save_record`)
///   compares a save's expected revision with and adds 1 to on each save, one the table has or
///   an `add_column` adds; not a key column. Without it the store uses the row's `xmin`.
/// - `columns` (optional): other existing columns the expressions read, such as `name` in
///   `'description for ' || name`; expand's checks make sure they exist.
/// - `backfill` (optional): `batchSize`, `niceRatio`, `maxReplicaLag` as in format 1.
/// - `operations`: 1 to 64 objects, each with one key naming the operation:
///   - `add_column`: `name`, `type`, `up`, `default`, `notNull`, `unique`, `check`,
///     `references` (`{"table", "columns", "onDelete"}`); a NOT NULL column needs `up` or
///     `default`, or contract could never complete.
///   - `alter_column`: `from` (a column or a list), `to` (a column definition as above
///     without `up`, or a list), `up` and `down` (an expression, or an object giving one per
///     column when there are several; both may be left out for a rename of one column).
///   - `drop_column`: `name`, and exactly one of `down` and `default` for old readers.
///   - `create_index`: `name`, `columns`, `unique` (optional), `method` (optional), `where` (optional).
///   - `drop_index`, `drop_constraint`: `name`.
///   - `add_constraint`: `name` and exactly one of `check` (an expression), `unique` (columns)
///     and `foreignKey` (columns, with `references`).
///   - `set_not_null`: `column`, `up` (optional: the value for NULLs).
///   - `rename_table`: `to`, the new name in the same schema; the plan's only operation.
///   - `sql`: `expand`, `revert`, `contract`: lists of hand-written SQL files, as format 1
///     names them (not under `compiled/`, which is the compiler's).
/// - `checks` (optional): the plan's own checks, an object whose keys are step kinds
///   (`expand`, `switch`, `backfill`, `contract`), each a list of checks as format 1 writes
///   them (`name`, `sql` or `sqlFile`, `expect`, `message`). They run after the checks the
///   compiler derives for the step, whose names they may not take; a `sqlFile` is not under
///   `compiled/`.
///
/// Expressions are SQL over one row (see ``SQLExpression``): they may read the key, the
/// `columns`, and the columns the operations name, as each operation allows, and they run with
/// `search_path` set to `pg_catalog, pg_temp`, so anything of your own in them is schema-qualified.
public struct DeclarativePlan: Sendable, Hashable {
    /// The plan's name.
    public let name: String
    /// The table it migrates.
    public let table: QualifiedName
    /// The key the backfill walks, in order.
    public let key: [String]
    /// The revision column the record store checks and bumps, or nil for the row's `xmin`.
    public let revision: String?
    /// Existing columns the expressions read and the plan does not change.
    public let columns: [String]
    /// A `LIKE` pattern over `application_name` marking legacy sessions.
    public let legacyApplicationPattern: String?
    /// How long the modern writer must write before contract.
    public let modernWriterWindow: Duration
    /// Rows per backfill batch.
    public let batchSize: Int
    /// The backfill's pause after each batch, as a fraction of the batch's time.
    public let niceRatio: Double
    /// The standby replay lag a batch may start with.
    public let maximumReplicaLag: Duration
    /// The operations, in order.
    public let operations: [DeclarativeOperation]
    /// The plan's own checks, by step, run after the ones the compiler derives.
    public let checks: [PlanStep.Kind: [PlanCheck]]
    /// The applications' statements `phase rehearse` replays (`statements`), as format 1 gives them.
    public internal(set) var statements: [ApplicationStatement] = []
    /// What the backfill adapts its pace to (`backfill`: `targetBatchTime`, `maxActiveSessions`, `throttleQuery`).
    public internal(set) var backfillThrottle: PlanBackfillThrottle = .standard
    /// What the operator declared, as a plan's pins record it (``PlanPins``): the manifest's JSON
    /// with its keys sorted and no whitespace, less what may change once the plan has begun (the
    /// window, the backfill's tuning, the statements a rehearsal replays, the checks' messages).
    ///
    /// Two manifests that differ only in layout, in key order or in those have the same text;
    /// unlike the compiled SQL, it does not change with the version of Cutover that reads it.
    public internal(set) var declarationText = ""

    /// Reads and validates a format-2 manifest; `file` names it in errors.
    public init(manifest: [UInt8], file: String = "plan.json") throws(PlanManifestError) {
        do {
            let root = try PlanManifestDecoder.root(from: manifest)
            self = try DeclarativePlanDecoder.plan(from: root)
        } catch {
            throw PlanManifestError(file: file, field: error.field.description, problem: error.problem)
        }
    }

    init(name: String, table: QualifiedName, key: [String], revision: String? = nil, columns: [String],
         legacyApplicationPattern: String?, modernWriterWindow: Duration, batchSize: Int, niceRatio: Double,
         maximumReplicaLag: Duration, operations: [DeclarativeOperation], checks: [PlanStep.Kind: [PlanCheck]]) {
        self.name = name
        self.table = table
        self.key = key
        self.revision = revision
        self.columns = columns
        self.legacyApplicationPattern = legacyApplicationPattern
        self.modernWriterWindow = modernWriterWindow
        self.batchSize = batchSize
        self.niceRatio = niceRatio
        self.maximumReplicaLag = maximumReplicaLag
        self.operations = operations
        self.checks = checks
    }

    /// The same plan with `checks` as its own checks.
    func with(checks: [PlanStep.Kind: [PlanCheck]]) -> DeclarativePlan {
        var plan = DeclarativePlan(name: name, table: table, key: key, revision: revision, columns: columns,
                                   legacyApplicationPattern: legacyApplicationPattern,
                                   modernWriterWindow: modernWriterWindow, batchSize: batchSize, niceRatio: niceRatio,
                                   maximumReplicaLag: maximumReplicaLag, operations: operations, checks: checks)
        plan.statements = statements
        plan.backfillThrottle = backfillThrottle
        plan.declarationText = declarationText
        return plan
    }

    /// The hand-written SQL files the `sql` operations and the plan's own checks name, each
    /// once, in plan order: what a loader reads from the plan folder beside the compiled files.
    public var handWrittenFilePaths: [String] {
        var seen: Set<String> = []
        let operationFiles = operations.flatMap { operation -> [String] in
            guard case .sql(let files) = operation else { return [] }
            return (files.expand + files.revert + files.contract).map(\.path)
        }
        let checkFiles = PlanStep.Kind.allCases.flatMap { kind in
            (checks[kind] ?? []).compactMap { check -> String? in if case .file(let path) = check.query { path } else { nil } }
        }
        return (operationFiles + checkFiles).filter { seen.insert($0).inserted }
    }
}
