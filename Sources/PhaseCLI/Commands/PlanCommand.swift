import CommandLineKit

/// `phase plan`: the plan's steps, their SQL and the locks they take, without a database.
struct PlanCommand: PhaseCommand {
    /// `--sql`
    static let sql = Flag("sql", help: "Show each statement's whole SQL, and each hand-written file's and check's, instead of its first line.")

    static let spec = CommandSpec(
        "plan", abstract: "Show the plan's steps, their SQL and the locks they take; changes nothing.",
        discussion: """
            Reads the plan (--plan DIR, or the built-in reference plan) and connects to no database. For every step \
            (expand, switch, backfill, contract) and each revert (what phase rollback expand and rollback contract \
            run), it lists each file: whether it runs in a transaction, the server versions it runs on, and its \
            statements, each with the lock it takes on the table, what it does to the rows (catalog only, scans \
            the table, reads a sample of the table, writes rows, rewrites the table) and anything else it locks. Then the step's checks, each \
            with its expectation and SQL. A step's first line says what the step does to the table as a whole.

            A declarative plan (plan.json format 2) declares each generated statement's lock; its hand-written sql \
            files, like every file of a plan of SQL files (format 1), declare none, so their locks are estimated \
            from each statement's first words and said to be. --format json gives the same, with each statement's \
            whole SQL. docs/plans.md is the reference of plan.json; 'phase new' writes a starting plan for a table.
            """,
        parameters: [Self.sql], command: Self.self)

    let context: PhaseContext
    let isShowingSQL: Bool

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        isShowingSQL = parsed[Self.sql]
    }

    func run() async throws -> ExitCode {
        context.console.printResult(PlanResult(source: try context.planSource(), isShowingSQL: isShowingSQL), format: context.format)
        return .done
    }
}
