import CommandLineKit
import Cutover
import Foundation
import PostgresClient

/// `phase new`: inspect a table and write a starting declarative plan for it into `--plan DIR`.
///
/// A command of its own rather than `phase plan --init`: `phase plan` reads a plan and needs no
/// database, while this one connects and writes a file, and `phase init` (the control schema)
/// is another thing again.
struct NewCommand: PhaseCommand {
    /// `--table`
    static let table = Option("table", type: .string, valueName: "[schema.]name",
                              help: "The table to migrate: name, found on the connection's search_path, or schema.name; each part as the catalog spells it, or in double quotes as SQL writes it (\"Sales Data\".\"Order Items\").")
    /// `--name`
    static let name = Option("name", type: .string, valueName: "name", help: "The plan's name; the table's name when omitted.")
    /// `--legacy-application-pattern`
    static let legacyPattern = Option("legacy-application-pattern", type: .string, default: "legacy-%", valueName: "pattern",
                                      help: "The LIKE pattern over application_name by which old application versions connect.")
    /// `--force`
    static let force = Flag("force", help: "Overwrite the folder's plan.json if it has one.")

    static let spec = CommandSpec(
        "new", abstract: "Write a starting declarative plan.json for a table, from what the database says of it.",
        discussion: """
            Connects, reads the table's columns and key from the catalog (changing nothing there), and writes \
            DIR/plan.json for --plan DIR (the folder is made if missing; an existing plan.json is kept unless \
            --force): a declarative plan (format 2) with the plan's name, the table schema-qualified, its key \
            (the primary key, or else the unique index over the fewest NOT NULL columns), the legacy application \
            pattern and the 10m modern-writer window, and one add_column operation as a template.

            The template's name, type and up are placeholders that the plan reader refuses, naming the first \
            one, until they are edited, so that a plan nobody edited never runs. A table without such a key, a \
            partitioned table or a view is refused (exit 3), and so is a plan's name that the database tracks for another \
            table (pass --name). docs/plans.md is the reference of every key and \
            operation; then run phase --plan DIR plan to see what the plan will do.
            """,
        parameters: [Self.table, Self.name, Self.legacyPattern, Self.force], command: Self.self)

    let context: PhaseContext
    let table: String?
    let name: String?
    let legacyPattern: String
    let isForced: Bool

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        table = parsed[Self.table]
        name = parsed[Self.name]
        legacyPattern = parsed[Self.legacyPattern]
        isForced = parsed[Self.force]
    }

    func run() async throws -> ExitCode {
        guard let folder = context.planFolder else {
            throw CommandFailure("phase new needs --plan DIR: the folder to write plan.json into", exitCode: .usage)
        }
        guard let table else { throw CommandFailure("phase new needs --table [schema.]name: the table to migrate", exitCode: .usage) }
        guard let tableName = QualifiedName(planText: table) else {
            throw CommandFailure("--table \(DisplayText.quoted(table)) is not \(QualifiedName.planTextForms)", exitCode: .usage)
        }
        let path = (folder as NSString).appendingPathComponent("plan.json")
        let exists = FileManager.default.fileExists(atPath: path)
        if exists, !isForced {
            throw Self.exists(path)
        }
        let configuration = context.configuration
        let chosenName = name
        let (inspection, tracked) = try await runOnDedicatedThread(named: "cutover-phase") {
            let connection = try PostgresConnection(configuration: configuration)
            connection.noticeHandler = { _ in }
            let inspection = try TableInspection.inspect(tableName, on: connection)
            return (inspection, try Self.otherTrackedTable(ofPlan: chosenName ?? inspection.name, inspection: inspection, on: connection))
        }
        let planName = name ?? inspection.name
        if let tracked {
            throw CommandFailure("a plan named \(DisplayText.quoted(planName)) is tracked in this database for \(tracked): "
                                 + "pass --name to give this table's plan a name of its own", exitCode: .refused)
        }
        let plan = StartingPlan(name: planName,
                                table: QualifiedName(schema: inspection.schema, name: inspection.name).planText,
                                key: inspection.key.columns, legacyApplicationPattern: legacyPattern,
                                modernWriterWindow: DurationText.format(PlanLimits.defaultModernWriterWindow))
        try write(plan.manifest, to: path, folder: folder, replacing: exists)
        context.console.printResult(NewPlanResult(path: path, folder: folder, plan: plan, table: inspection, isOverwritten: exists),
                                    format: context.format)
        return .done
    }

    /// The other table that a plan of this name is registered for in the database, if the
    /// control schema tracks one: a plan's name is one migration (docs/plans.md).
    private static func otherTrackedTable(ofPlan plan: String, inspection: TableInspection,
                                          on connection: PostgresConnection) throws -> String? {
        let present = try connection.query("SELECT to_regclass('cutover.record_plans') IS NOT NULL AS present")[0]
            .decode(Bool.self, "present")
        guard present else { return nil }
        return try connection.query("""
            SELECT e.table_name FROM cutover.record_plans AS e
             WHERE e.plan = \(plan)
               AND CAST(to_regclass(e.table_name) AS oid) IS DISTINCT FROM (
                   SELECT c.oid FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
                    WHERE n.nspname = \(inspection.schema) AND c.relname = \(inspection.name))
            """).first?.decode(String.self, "table_name")
    }

    /// Writes the manifest whole or not at all: a new file never replaces one made meanwhile,
    /// and a replaced one is swapped in by a rename.
    private func write(_ manifest: String, to path: String, folder: String, replacing: Bool) throws {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data(manifest.utf8).write(to: URL(fileURLWithPath: path), options: replacing ? .atomic : .withoutOverwriting)
        } catch CocoaError.fileWriteFileExists {
            throw Self.exists(path)
        } catch {
            throw CommandFailure("cannot write \(path): \(error.localizedDescription)")
        }
    }

    private static func exists(_ path: String) -> CommandFailure {
        CommandFailure("\(path) exists already: phase new keeps it; give --force to overwrite it", exitCode: .usage)
    }
}
