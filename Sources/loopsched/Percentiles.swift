#if CommandLineTool
/// Order statistics over a sample.
struct Percentiles {
    private let sorted: [Int64]

    init(_ values: [Int64]) {
        sorted = values.sorted()
    }

    var count: Int { sorted.count }

    /// The value at quantile `q` (0…1), nearest rank.
    func value(at q: Double) -> Int64 {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((q * Double(sorted.count)).rounded(.up)) - 1
        return sorted[Swift.min(Swift.max(rank, 0), sorted.count - 1)]
    }

    var max: Int64 { sorted.last ?? 0 }
    var min: Int64 { sorted.first ?? 0 }
    var values: [Int64] { sorted }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

extension [Sample] {
    /// The median of `metric` over the runs that reported it; nil if none did.
    func median(of metric: String) -> Double? {
        let values = compactMap { $0.metrics[metric] }
        return values.isEmpty ? nil : loopsched.median(values)
    }
}
#endif
