import Cutover

extension DraftRecords: RecordContractEntity {
    /// `draft-<index>`.
    public static func sampleKey(_ index: Int) -> RecordKey { RecordKey(.text("draft-\(index)")) }

    /// Two contents that the legacy format keeps whole: the title alone, default body and tags.
    public static var sampleContents: [DraftContent] { [DraftContent(title: "Quarterly plan"), DraftContent(title: "Annual plan")] }
}
