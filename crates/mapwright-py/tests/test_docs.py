"""The examples in the docstrings run and give what they show."""

import doctest

import mapwright


def test_docstring_examples():
    failed, attempted = doctest.testmod(mapwright, extraglobs={"mapwright": mapwright}, verbose=False)
    assert attempted >= 8 and failed == 0
