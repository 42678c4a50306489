import CommandLineKit
import Cutover
import CutoverPostgres

/// `phase rehearse`: run the whole plan on a scratch copy of its table on the same server, and
/// report the locks, rewrites, time and WAL each statement would cost and whether the
/// applications' statements still work after every step.
struct RehearseCommand: PhaseCommand {
    /// `--sample-rows`
    static let sampleRows = Option("sample-rows", type: .integer(in: 1...10_000_000), default: 10_000, valueName: "count",
                                   help: "How many of the table's rows to copy into the scratch table.")
    /// `--replay-timeout`
    static let replayTimeout = Option("replay-timeout", type: .duration(in: .seconds(1) ... .seconds(3600)), default: .seconds(30),
                                      valueName: "duration", help: "How long one replayed application statement may run on the copy.")
    /// `--suggest`
    static let suggest = Flag("suggest", help: "List the statements pg_stat_statements has seen on the plan's table, as a start for the plan's \"statements\"; rehearses nothing.")
    static let spec = CommandSpec(
        "rehearse", abstract: "Run the whole plan on a scratch copy of its table on this server, before expand, and report what it would do.",
        discussion: """
            Creates a scratch database on the same server (the role needs CREATEDB), copies the table into it with \
            its columns, types, defaults, constraints, indexes and triggers (foreign keys to other tables are left \
            out), fills it with a sample of the real rows, and runs every step and every rollback the plan allows: \
            expand, rollback expand, expand, switch modern, rollback switch, switch modern, backfill, rollback switch, \
            switch modern, backfill, rollback switch, rollback expand (with the modern columns backfilled; it must \
            lose no row), expand, switch modern, backfill, contract. For each statement it reports the locks observed \
            in pg_locks, any relation rewritten (its file replaced), its time and WAL on the sample and as estimated \
            for the real table from its size; the WAL is the statement's own where the server counts it per session \
            (PostgreSQL 18: a statement outside a transaction, and backfill), and otherwise marked server-wide: all \
            the server wrote meanwhile, other sessions' included. Before expand and after every step until contract it replays the applications' statements \
            (the plan's "statements", or a built-in set of an update and a same-value update of each legacy column, an \
            insert, an upsert, a select and a delete) and compares the two representations after each. The scratch \
            database is always removed; one left by a rehearsal that was killed is removed by the next phase command. \
            On the real database it only reads (the catalog, the table's size, the sample) and records the \
            rehearsal, which expand and contract require; each statement on the real table runs alone in its \
            transaction with --lock-timeout as its lock and statement timeouts, so it holds its lock no longer than \
            that, and the rehearsal stops (exit 1) when the sample cannot be read in that time. Runs before expand only. Exits 0 when nothing \
            would break, 3 when a statement that worked fails later, the representations disagree, a step fails, or a \
            lock that blocks the application would be held longer than --lock-timeout through work that grows with the \
            table's rows (catalog changes alone that took longer on the copy are a note: the server was busy). With \
            --suggest it only lists the statements \
            pg_stat_statements has seen on the table in this database, most called first, each marked legacy or \
            modern by the columns it names, ready to paste into the plan's "statements" once each $n has a sample \
            value.
            """,
        parameters: [Self.sampleRows, Self.replayTimeout, Self.suggest, StepOptions.lockTimeout, StepOptions.statementTimeout], command: Self.self)

    let context: PhaseContext
    let sampleRows: Int
    let replayTimeout: Duration
    let isSuggesting: Bool

    init(_ parsed: ParsedCommand, context: PhaseContext) {
        self.context = context
        sampleRows = parsed[Self.sampleRows]
        replayTimeout = parsed[Self.replayTimeout]
        isSuggesting = parsed[Self.suggest]
    }

    var stopEffect: StopEffect { .scratchRemoved }

    func run() async throws -> ExitCode {
        if isSuggesting { return try await suggestStatements() }
        let options = Rehearsal.Options(sampleRows: sampleRows, sql: context.steps.sqlPolicy, statementTimeout: replayTimeout,
                                        isStopRequested: { StopSignals.shared.isStopRequested })
        let console = context.console
        let quiet = context.isQuiet
        let report = try await context.withReadingRunner { runner in
            try Rehearsal(connection: runner.connection, source: runner.source, options: options,
                          log: { line in if !quiet { console.printDiagnostic(line) } }).run()
        }
        context.console.printResult(RehearseResult(report: report), format: context.format)
        return report.verdict == .passed ? .done : .refused
    }

    private func suggestStatements() async throws -> ExitCode {
        let result = try await context.withReadingRunner { runner -> SuggestionsResult in
            let modern = runner.source.compiled?.declaration.writerColumns.modern ?? []
            do {
                return SuggestionsResult(table: runner.plan.table,
                                         suggestions: try StatementSuggestions.seen(on: runner.plan.table, modernColumns: modern, on: runner.connection))
            } catch let unavailable as StatementSuggestions.Unavailable {
                throw CommandFailure("cannot suggest statements: \(unavailable)",
                                     details: ["without them, phase rehearse replays its built-in statements"])
            }
        }
        context.console.printResult(result, format: context.format)
        return .done
    }
}

/// `phase rehearse --suggest`: the statements seen on the table, and a `statements` list to start from.
struct SuggestionsResult: CommandResult {
    let table: String
    let suggestions: [StatementSuggestions.Suggestion]

    var text: String {
        guard !suggestions.isEmpty else {
            return "pg_stat_statements has seen no statement on \(table) in this database (since its statistics were last reset)"
        }
        var lines = ["statements pg_stat_statements has seen on \(table), most called first:"]
        for suggestion in suggestions {
            let fill = suggestion.parameters == 0 ? "" : " (\(suggestion.parameters) value\(suggestion.parameters == 1 ? "" : "s") to fill in)"
            lines.append("  \(RehearsalAnalysis.count(suggestion.calls)) calls, \(suggestion.application)\(fill): "
                         + DisplayText.unquoted(suggestion.sql.split(whereSeparator: \.isWhitespace).joined(separator: " "), limit: 200))
        }
        lines.append("a start for the plan's \"statements\" (write a sample value in place of each $n):")
        lines.append(JSONResult.array(suggestions.enumerated().map { index, suggestion in
            ["name": .string("seen \(index + 1)"), "application": .string(suggestion.application.rawValue), "sql": .string(suggestion.sql)]
        }).text(.pretty))
        return lines.joined(separator: "\n")
    }

    var json: JSONResult {
        ["table": .string(table), "suggestions": .array(suggestions.map {
            ["calls": .integer($0.calls), "application": .string($0.application.rawValue), "sql": .string($0.sql),
             "parameters": .integer(Int64($0.parameters))]
        })]
    }
}
