// The user-side names the documentation's fragments use without declaring them: a reader's own
// work, service, logger or tracer. Copied into every library target of the examples' consumer
// package (scripts/extract-examples.py), never into a program. Keep it minimal: a stub stands for
// something the reader has, never for this package's API, and a name a reader could not guess
// from the text is better declared in the example itself. A trait's stubs go behind
// `#if EXAMPLES_TRAIT_<trait>` (defined in the targets of the blocks marked with that trait):
//
//     #if EXAMPLES_TRAIT_ServiceLifecycle
//     import Logging
//     let logger = Logger(label: "examples")  // the application's logger
//     #endif
//
// The documentation's examples need none today: each declares what it uses.

import LoopScheduling
import Scheduling
