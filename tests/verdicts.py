"""What a verdict reads like on every face (app.domain.bench.Verdict.text), for the tests."""

SPAN = r"\(([+-]\d+% to [+-]\d+%|not bounded yet)\)"

#: One run's verdict in words, "(client-bound)" after it when the clients set the pace.
VERDICT = (
    rf"((faster|slower): [+-]\d+% {SPAN}|no change: within ±10% {SPAN}"
    rf"|undecided: (the rounds spread too widely to tell {SPAN}|\d+ rounds a side are too few"
    r" to tell); measure longer"
    r"|unmeasured: .*no change claimed)( \(client-bound\))?"
)

#: How each verdict begins.
STARTS = ("faster", "slower", "no change", "undecided", "unmeasured")
