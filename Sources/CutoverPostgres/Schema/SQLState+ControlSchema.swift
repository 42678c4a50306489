import PostgresClient

/// The SQLSTATEs `cutover.save_draft` raises (class CU, the control schema's own), each an
/// outcome of the consumer contract or a refusal of the stored format.
extension SQLState {
    /// CU001: the expected revision is not the current one; the detail holds the current one.
    static let revisionConflict = SQLState(rawValue: "CU001")
    /// CU002: a save expecting a revision above 0 found no such draft.
    static let draftNotFound = SQLState(rawValue: "CU002")
    /// CU003: the draft's revision is at Int64.max already.
    static let revisionExhausted = SQLState(rawValue: "CU003")
    /// CU004: the table does not hold the format the save writes in this phase.
    static let formatNotStored = SQLState(rawValue: "CU004")
    /// CU005: the stored row is in a format the function does not know; the detail names it.
    static let unsupportedStoredFormat = SQLState(rawValue: "CU005")
    /// CU007: the calling role may not write (or read) the table itself, so the function, which
    /// runs as the schema's owner, does not do it for that role either.
    static let callerNotPermitted = SQLState(rawValue: "CU007")
}
