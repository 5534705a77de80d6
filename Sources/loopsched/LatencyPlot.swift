#if CommandLineTool
import Foundation

/// The lateness distributions of both schedulers as an SVG chart: one cumulative distribution per
/// scheduler and workload, lateness on a logarithmic axis (1 µs to the largest value).
struct LatencyPlot {
    let samples: [Workload: [BenchTarget: [Sample]]]

    private let width = 760.0
    private let height = 440.0
    private let left = 70.0
    private let right = 20.0
    private let top = 40.0
    private let bottom = 60.0

    func svg() -> String {
        var series: [(label: String, color: String, values: [Int64])] = []
        let colors: [BenchTarget: [String]] = [.loop: ["#1f77b4", "#6baed6"], .queue: ["#d62728", "#fc9272"]]
        for (workloadIndex, workload) in [Workload.lateness, .periodicDrift].enumerated() {
            for target in BenchTarget.allCases {
                let values = samples[workload]?[target]?.flatMap(\.lateness) ?? []
                guard !values.isEmpty else { continue }
                series.append(("\(target.displayName), \(workload.rawValue)", colors[target]![workloadIndex], values))
            }
        }
        let maximum = max(series.flatMap(\.values).max() ?? 1_000, 10_000)
        let lowest = 1_000.0  // 1 µs
        let logMin = log10(lowest)
        let logMax = log10(Double(maximum))
        func x(_ nanoseconds: Int64) -> Double {
            let clamped = max(Double(nanoseconds), lowest)
            return left + (log10(clamped) - logMin) / (logMax - logMin) * (width - left - right)
        }
        func y(_ fraction: Double) -> Double { top + (1 - fraction) * (height - top - bottom) }

        var svg = [
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" "
                + "font-family=\"sans-serif\" font-size=\"12\">",
            "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>",
            "<text x=\"\(width / 2)\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">"
                + "Timer lateness, cumulative distribution (loopsched bench)</text>",
        ]
        var decade = pow(10, floor(logMin))
        while decade <= Double(maximum) * 1.0001 {
            let position = x(Int64(decade))
            svg.append(
                "<line x1=\"\(position)\" y1=\"\(top)\" x2=\"\(position)\" y2=\"\(height - bottom)\" stroke=\"#ddd\"/>"
            )
            svg.append(
                "<text x=\"\(position)\" y=\"\(height - bottom + 16)\" text-anchor=\"middle\">\(Self.label(decade))</text>"
            )
            decade *= 10
        }
        for fraction in stride(from: 0.0, through: 1.0, by: 0.25) {
            svg.append(
                "<line x1=\"\(left)\" y1=\"\(y(fraction))\" x2=\"\(width - right)\" y2=\"\(y(fraction))\" stroke=\"#ddd\"/>"
            )
            svg.append(
                "<text x=\"\(left - 8)\" y=\"\(y(fraction) + 4)\" text-anchor=\"end\">\(Int(fraction * 100))%</text>"
            )
        }
        svg.append("<text x=\"\(width / 2)\" y=\"\(height - 18)\" text-anchor=\"middle\">lateness (log scale)</text>")
        svg.append(
            "<text x=\"18\" y=\"\(height / 2)\" text-anchor=\"middle\" transform=\"rotate(-90 18 \(height / 2))\">"
                + "timers started by then</text>"
        )
        for (index, entry) in series.enumerated() {
            let sorted = entry.values.sorted()
            let step = max(1, sorted.count / 400)
            var points: [String] = []
            for position in stride(from: 0, to: sorted.count, by: step) {
                points.append("\(x(sorted[position])),\(y(Double(position + 1) / Double(sorted.count)))")
            }
            points.append("\(x(sorted.last!)),\(y(1))")
            svg.append(
                "<polyline fill=\"none\" stroke=\"\(entry.color)\" stroke-width=\"2\" points=\"\(points.joined(separator: " "))\"/>"
            )
            let legendY = top + 16 + Double(index) * 18
            svg.append(
                "<line x1=\"\(left + 12)\" y1=\"\(legendY - 4)\" x2=\"\(left + 36)\" y2=\"\(legendY - 4)\" stroke=\"\(entry.color)\" stroke-width=\"3\"/>"
            )
            svg.append("<text x=\"\(left + 42)\" y=\"\(legendY)\">\(entry.label) (n = \(sorted.count))</text>")
        }
        svg.append("</svg>")
        return svg.joined(separator: "\n")
    }

    private static func label(_ nanoseconds: Double) -> String {
        switch nanoseconds {
        case ..<1e6: "\(Int(nanoseconds / 1e3)) µs"
        case ..<1e9: "\(Int(nanoseconds / 1e6)) ms"
        default: "\(Int(nanoseconds / 1e9)) s"
        }
    }
}
#endif
