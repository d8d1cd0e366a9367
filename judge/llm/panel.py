"""The members of a panel of judges: each one a model (with its own server, `api_base`) and the prompt directory it
is asked with, so a panel is several models, one model under several prompt sets, or both.

How the panel asks its members and votes is judge.judging.panel; this module only says who the members are and
refuses a panel that cannot be one (fewer than two members, a member listed twice).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import InstanceOf

from judge.errors import SettingError
from judge.settings import ModelSettings, settings_class


@settings_class
class PanelMember:
    """One judge of a panel: `model` (its settings, with its own `api_base`) asked with the prompts of
    `prompts_dir` (None: the shipped prompts)."""

    model: InstanceOf[ModelSettings]
    prompts_dir: Path | None = None     # a path given as text is a Path

    @property
    def name(self) -> str:
        """How records, the view and the summary name this judge: the model, and the prompt directory's name when
        it has its own (`model@dir`)."""
        return self.model.model if self.prompts_dir is None else f"{self.model.model}@{self.prompts_dir.name}"


def check_panel(members: Sequence[PanelMember]) -> tuple[PanelMember, ...]:
    """The members as a tuple; SettingError (one line) for a panel of fewer than two judges, or one that lists a
    judge twice (same model and prompt directory: it would only repeat the same cached answers)."""
    members = tuple(members)
    wrong = [m for m in members if not isinstance(m, PanelMember)]
    if wrong:
        raise TypeError(f"a panel takes judge.llm.panel.PanelMember objects, not {wrong[0]!r}")
    if len(members) < 2:
        raise SettingError(f"a panel needs at least two judges (--model given more than once); got {len(members)}")
    seen: dict[tuple[str, Path | None], PanelMember] = {}
    for member in members:
        key = (member.model.model, member.prompts_dir.resolve() if member.prompts_dir else None)
        if key in seen:
            raise SettingError(f"the panel lists the judge {member.name} twice: give each model or prompt "
                               "directory once")
        seen[key] = member
    names = [m.name for m in members]
    if len(set(names)) < len(names):
        raise SettingError(f"two judges of the panel go by the same name ({', '.join(names)}): give their prompt "
                           "directories different names")
    return members
