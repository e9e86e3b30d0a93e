"""What a verdict reads like on every face (app.domain.bench.Verdict.text), for the tests."""

#: A change in per cent (app.domain.compare.pct): whole, or its first digit under 1 %.
PCT = r"[+-]\d+(\.\d+)?%"
SPAN = rf"\(({PCT} to {PCT}|not bounded yet)\)"

#: One run's verdict in words, "(client-bound)" after it when the clients set the pace.
VERDICT = (
    rf"((faster|slower): {PCT} {SPAN}|no change: within ±10% {SPAN}"
    rf"|undecided: (the rounds spread too widely to tell {SPAN}|\d+ rounds a side are too few"
    r" to tell); measure longer"
    r"|unmeasured: .*no change claimed)( \(client-bound\))?"
)

#: How each verdict begins.
STARTS = ("faster", "slower", "no change", "undecided", "unmeasured")
