"""Every learned part of the offline extractor loads only the weights it was measured with:
a changed file is refused by its sha256, with an error that names it."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from engrammar.errors import ConfigError
from engrammar.extract.parser import (
    _abilities,
    _answers,
    _attributes,
    _decisions,
    _jobs,
    _kinds,
    _statements,
)


@pytest.mark.parametrize("module", [_decisions, _kinds, _attributes, _jobs, _abilities,
                                    _statements, _answers],
                         ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_the_weights_are_checked_before_they_load(module: ModuleType, tmp_path: Path) -> None:
    shipped = Path(str(module.WEIGHTS))
    changed = tmp_path / shipped.name
    changed.write_bytes(shipped.read_bytes() + b"\0")
    with pytest.raises(ConfigError, match=f"{shipped.name}: sha256"):
        module.load(changed)
    assert type(module.load()) is type(module.shipped())
