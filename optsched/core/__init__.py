"""The core every model shares and that knows no model: the instance format, the
schedule, the progress rule, the independent validator, the metrics and the result.

* :mod:`optsched.core.instance` - :class:`Cluster`, :class:`Node`, :class:`Job`,
  :class:`Instance` (immutable, validated, JSON round trip);
* :mod:`optsched.core.job_profiles` - what a job may carry: :class:`Utility`,
  :class:`Sensitivity`, :class:`GpuMemory`;
* :mod:`optsched.core.colocation` - measured co-located rates of pairs of jobs sharing
  GPUs (:class:`Colocation`), an instance's optional table;
* :mod:`optsched.core.fields` - the field checks behind every ``InvalidInstance``;
* :mod:`optsched.core.schema` - the instance file format as a JSON Schema;
* :mod:`optsched.core.schedule` - :class:`Placement` (what a job holds) and
  :class:`Allocation` (a placement over an interval) in one :class:`Schedule`;
* :mod:`optsched.core.progress` - the one rule a gang progresses by;
* :mod:`optsched.core.rules` - the rules a placement and a gang obey, shared by the
  validator and the simulator's decision checks;
* :mod:`optsched.core.validate` - the independent validator;
* :mod:`optsched.core.metrics` - JCT statistics, makespan, CRU, utility, fairness;
* :mod:`optsched.core.result` - :class:`Result`, :class:`Status` and :func:`finalize`;
* :mod:`optsched.core.jsonio` - the reader of user files.
"""
