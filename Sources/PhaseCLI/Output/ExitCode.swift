/// How `phase` ends, with exactly the numbers the CLI contract promises.
public enum ExitCode: Int32, Sendable, CaseIterable {
    /// The command did what was asked (0).
    case done = 0
    /// The command failed (1).
    case error = 1
    /// A step was refused by its checks; the failing checks were named (3).
    case refused = 3
    /// `switch --wait-for-fleet`: the switch committed, but not every live registered instance
    /// reported following its epoch within `--fleet-timeout` (4). Running the same command again
    /// changes nothing and waits again.
    case fleetBehind = 4
    /// The command line was wrong (64, `EX_USAGE`).
    case usage = 64
    /// The database could not be reached (69, `EX_UNAVAILABLE`).
    case databaseUnreachable = 69
    /// Another runner holds the lock; try again later (75, `EX_TEMPFAIL`).
    case lockHeld = 75
    /// The server answered but would not let the role in: authentication failed, no such role
    /// or database, or `pg_hba.conf` refused it (77, `EX_NOPERM`). Unlike 69, trying again
    /// will not help until the credentials or the server's rules change.
    case accessDenied = 77
    /// Stopped by SIGHUP (128 + 1).
    case stoppedByHangUp = 129
    /// Stopped by SIGINT, Ctrl-C (128 + 2).
    case stoppedByInterrupt = 130
    /// Stopped by SIGTERM (128 + 15).
    case stoppedByTermination = 143
}
