import Cutover

/// An entity the record contract suite can run: it names keys and contents to save.
public protocol RecordContractEntity: RecordEntity {
    /// A distinct, valid key for each index 0, 1, 2, ….
    static func sampleKey(_ index: Int) -> RecordKey

    /// At least two distinct contents that each format writes and reads back unchanged.
    static var sampleContents: [Content] { get }
}
