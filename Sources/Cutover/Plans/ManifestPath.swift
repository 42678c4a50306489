/// Where a value stands in a manifest, written as a JSON path: `steps[2].apply[0]`, empty for the document.
struct ManifestPath: Sendable, Hashable, CustomStringConvertible {
    /// The path as errors print it.
    private(set) var description = ""

    /// The path of the member `name` of the object here.
    func key(_ name: String) -> ManifestPath {
        ManifestPath(description: description.isEmpty ? name : description + "." + name)
    }

    /// The path of the element at `index` of the array here.
    func index(_ index: Int) -> ManifestPath {
        ManifestPath(description: description + "[\(index)]")
    }
}
