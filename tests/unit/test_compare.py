def test_a_change_under_one_per_cent_keeps_its_first_digit() -> None:
    """A *faster* whose interval starts at +0.3 % read "+0% to +22%", as if it held 0."""
    from app.domain.compare import pct

    assert [pct(v) for v in (0.0, 0.3, -0.04, 0.994, 1.4, -22.6, 2e-5, 1e-12)] == [
        "+0%", "+0.3%", "-0.04%", "+1%", "+1%", "-23%", "+0.00002%", "+0%",
    ]  # fmt: skip
