"""`DefaultPreemptionArgs`: how many candidate nodes preemption's dry run looks for at least.

Its own module so that the configuration reads it without the preemption
model (impl reads the configuration and computes preemption on its own).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from kcache.spec.objects import Fields
from kcache.spec.scheduler.plugin_args import ArgsError

#: DefaultPreemptionArgs' defaults
MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100


@attrs.frozen
class PreemptionArgs:
    """`DefaultPreemptionArgs`: how many candidates the dry run looks for at least."""

    min_candidate_nodes_percentage: int = MIN_CANDIDATE_NODES_PERCENTAGE
    min_candidate_nodes_absolute: int = MIN_CANDIDATE_NODES_ABSOLUTE

    @classmethod
    def from_json(cls, mapping: Mapping[str, object]) -> PreemptionArgs:
        """Read and validate as `ValidateDefaultPreemptionArgs` (ArgsError names the field)."""
        fields = Fields.top("DefaultPreemptionArgs", mapping)
        percentage = fields.raw.get("minCandidateNodesPercentage")
        absolute = fields.raw.get("minCandidateNodesAbsolute")
        args = cls(
            MIN_CANDIDATE_NODES_PERCENTAGE
            if percentage is None
            else fields.integer("minCandidateNodesPercentage", bits=32),
            MIN_CANDIDATE_NODES_ABSOLUTE
            if absolute is None
            else fields.integer("minCandidateNodesAbsolute", bits=32),
        )
        if not 0 <= args.min_candidate_nodes_percentage <= 100:
            raise ArgsError(
                ("minCandidateNodesPercentage",),
                f"Invalid value: {args.min_candidate_nodes_percentage}: "
                "not in valid range [0, 100]",
            )
        if args.min_candidate_nodes_absolute < 0:
            raise ArgsError(
                ("minCandidateNodesAbsolute",),
                f"Invalid value: {args.min_candidate_nodes_absolute}: not in valid range [0, inf)",
            )
        if not args.min_candidate_nodes_percentage and not args.min_candidate_nodes_absolute:
            raise ArgsError(
                ("minCandidateNodesPercentage",),
                "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
            )
        return args


#: the args of a profile whose pluginConfig gives DefaultPreemption none
DEFAULT_ARGS = PreemptionArgs()


#: the args of a profile whose pluginConfig gives DefaultPreemption none
DEFAULT_ARGS = PreemptionArgs()
