internal import CLibPQ
public enum PGProbe { public static func version() -> Int { Int(PQlibVersion()) } }
