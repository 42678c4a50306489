/// A migration plan: which table moves, how long the modern writer must run, and the steps' SQL and checks.
///
/// A plan is a folder holding `plan.json` and the SQL files it names. This type
/// is the validated manifest; the caller reads the files. Only
/// ``init(manifest:file:)`` makes one, so every plan has passed every rule:
///
/// ```swift
/// let plan = try MigrationPlan(manifest: bytesOfPlanJSON)
/// for path in plan.sqlFilePaths { /* read and checksum plan folder + path */ }
/// ```
///
/// The manifest format, version 1 (every key below is required unless marked
/// optional, and no other key is accepted):
///
/// ```json
/// {
///   "format": 1,
///   "name": "drafts",
///   "table": "drafts",
///   "legacyApplicationPattern": "legacy-%",
///   "modernWriterWindow": "10m",
///   "steps": [
///     {"kind": "expand", "apply": ["expand.sql", {"file": "expand_index.sql", "transaction": false}],
///      "revert": ["expand_revert.sql"], "checks": [ … ]},
///     {"kind": "switch"},
///     {"kind": "backfill", "batch": "backfill_batch.sql", "remaining": "backfill_remaining.sql", "batchSize": 1000,
///      "niceRatio": 0.25},
///     {"kind": "contract", "apply": ["contract_drop.sql"], "checks": [ … ]}
///   ]
/// }
/// ```
///
/// - `format`: the integer 1.
/// - `name`: 1 to 128 characters, no control characters.
/// - `table`: 1 to 63 UTF-8 bytes, no control characters, no dot; one identifier, quoted by the
///   runner and found on the connection's `search_path` (a schema-qualified name is refused).
/// - `legacyApplicationPattern` (optional): 1 to 256 characters, a `LIKE` pattern
///   over `application_name` that marks legacy sessions.
/// - `modernWriterWindow`: digits and a unit `s`, `m`, `h` or `d`, from `0s` to `366d`.
/// - `steps`: `expand`, then optionally `switch`, then `backfill`, then `contract`, each
///   at most once and in that order. A plan without a switch step adds no checks to it;
///   the phases still pass through it. The backfill step is required: its `remaining`
///   query is how the runner knows, before contract, that no row has only v1.
///   - expand: `apply` and `revert`, each 1 to 64 SQL files; `checks` (optional).
///   - switch: `checks` (optional).
///   - backfill: `batch` and `remaining` (paths); `batchSize` (optional, 1 to
///     1,000,000, default 1,000); `niceRatio` (optional, a number from 0 to 100, default 0:
///     the pause after each batch as a fraction of the batch's time); `checks` (optional).
///   - contract: `apply`, 1 to 64 SQL files, the last of which is the point of no return;
///     `revert` (optional, 1 to 64 SQL files) undoes what the files before the last did, so
///     that a contract stopped before its last file can be rolled back; `checks` (optional).
/// - A SQL file is a path string, or `{"file": path, "transaction": bool}` with
///   `transaction` optional (default true). Paths are relative, `/`-separated, of
///   `A-Z a-z 0-9 _ . / -`, with no empty, `.` or `..` component, at most 255
///   characters, ending in `.sql`; a list names each file once.
/// - `checks`: 0 to 64 objects with `name` (1 to 128 characters, unique in the
///   step), exactly one of `sql` (1 to 8,192 characters; tab and line breaks
///   allowed) and `sqlFile` (a path), `expect` (a ``CheckExpectation``, 1 to 256
///   characters) and `message` (1 to 1,024 characters).
///
/// Limits are in ``PlanLimits``. Refusals are ``PlanManifestError``s.
public struct MigrationPlan: Sendable, Hashable {
    /// The plan's name, as history rows and the CLI show it.
    public let name: String

    /// The table the plan migrates.
    public let table: String

    /// A `LIKE` pattern over `application_name` that marks sessions of the legacy application, if the plan gives one.
    public let legacyApplicationPattern: String?

    /// How long the modern writer must have written before contract may run.
    public let modernWriterWindow: Duration

    /// The plan's steps in order: expand first, contract last.
    public let steps: [PlanStep]

    /// The applications' statements `phase rehearse` replays (`statements`); empty when the plan
    /// declares none, and the rehearsal makes its own.
    public let statements: [ApplicationStatement]

    init(
        name: String, table: String, legacyApplicationPattern: String?, modernWriterWindow: Duration,
        steps: [PlanStep], statements: [ApplicationStatement] = []
    ) {
        self.statements = statements
        self.name = name
        self.table = table
        self.legacyApplicationPattern = legacyApplicationPattern
        self.modernWriterWindow = modernWriterWindow
        self.steps = steps
    }

    /// Reads and validates a manifest; `file` names it in errors.
    ///
    /// Throws the first rule the manifest breaks, in document order.
    public init(manifest: [UInt8], file: String = "plan.json") throws(PlanManifestError) {
        do {
            self = try PlanManifestDecoder.plan(from: manifest)
        } catch {
            throw PlanManifestError(file: file, field: error.field.description, problem: error.problem)
        }
    }

    /// The plan's step of `kind`, or nil when the plan has none.
    public func step(_ kind: PlanStep.Kind) -> PlanStep? {
        steps.first { $0.kind == kind }
    }

    /// The plan step whose SQL and checks `phaseStep` uses, or nil when the plan has none.
    public func step(for phaseStep: PhaseStep) -> PlanStep? {
        step(PlanStep.Kind(phaseStep))
    }

    /// Every SQL file the plan names, in manifest order, each once: what the runner reads and checksums.
    public var sqlFilePaths: [String] {
        var seen: Set<String> = []
        return steps.flatMap(\.sqlFilePaths).filter { seen.insert($0).inserted }
    }
}
