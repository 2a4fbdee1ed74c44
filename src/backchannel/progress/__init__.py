"""Progress that only goes up, for a handler's long work: ``ProgressStages`` (``stages.py``) puts
stages one after another on one scale, ``ProgressParts`` (``parts.py``) folds parts that run at
once into one stream. Each reports through anything with an async ``report_progress(progress,
total, message)``; the server hands them a ``Context`` (``ctx.stages``, ``ctx.progress_parts``).
It knows nothing of the server that uses it.
"""
