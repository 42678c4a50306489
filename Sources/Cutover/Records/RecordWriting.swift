/// Anything that saves records of one entity conditionally, once per operation: the consumer contract.
///
/// Conformers throw ``SaveFailure`` for every outcome that is not a commit or a
/// replay, and say which of the two a success was.
public protocol RecordWriting<Entity>: Sendable {
    /// The entity this writer saves.
    associatedtype Entity: RecordEntity

    /// Saves the record if its revision is the expected one, once per operation, and says whether it committed or replayed.
    func saveReportingOutcome(_ request: SaveRequest<Entity>) async throws -> RecordSaveResult<Entity>
}

extension RecordWriting {
    /// Saves the record and returns the result, whether committed now or replayed.
    @inlinable
    public func save(_ request: SaveRequest<Entity>) async throws -> SavedRecord<Entity> {
        try await saveReportingOutcome(request).saved
    }
}
