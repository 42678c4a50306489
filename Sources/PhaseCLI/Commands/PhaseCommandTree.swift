import CommandLineKit

/// The `phase` command tree: the global options and every command, each declared by its own
/// type, for parsing and help.
public enum PhaseCommandTree {
    /// The commands that group others and run nothing themselves.
    static let ledger = CommandSpec("ledger", abstract: "Look after the operation ledger.", subcommands: [LedgerPruneCommand.spec])

    /// The whole tree.
    public static let root = CommandSpec(
        "phase",
        abstract: "Move one feature's stored data from a legacy format to a modern one while the application keeps running.",
        discussion: """
            Steps run in order: init, expand, switch modern, backfill, contract. Each is checked before it runs \
            and recorded in the history; every step before contract can be rolled back. A step asked for again \
            after it happened reports it done and changes nothing.

            Exit codes: 0 done, 1 error, 3 refused by checks, 64 usage (the command line or the \
            connection string), 69 database unreachable, 75 another runner holds the lock, 77 the \
            database refused to let the role in (password, role, database, pg_hba.conf), 129, 130 \
            and 143 stopped by SIGHUP, SIGINT and SIGTERM, with one line saying how to go on.
            """,
        parameters: PhaseContext.parameters,
        subcommands: [
            InitCommand.spec, StatusCommand.spec, PlanCommand.spec, NewCommand.spec, CheckCommand.spec, RehearseCommand.spec, ExpandCommand.spec,
            SwitchCommand.spec, BackfillCommand.spec, ContractCommand.spec, RollbackCommand.spec, HistoryCommand.spec,
            ReadersCommand.spec, ObserveCommand.spec, CompareCommand.spec, DemoCommand.spec, SoakCommand.spec, ledger,
        ])

    /// The program over the tree.
    public static let program = CommandLineProgram(root: root)
}
