"""minitorch.profiler: torch.profiler's API over minitorch's C profiler events, and the journey view."""
from .events import EventList, FunctionEvent, FunctionEventAvg, MemoryEvent
from .profiler import (ProfilerAction, ProfilerActivity, profile, record_function, schedule,
                       supported_activities)

__all__ = ["profile", "record_function", "schedule", "ProfilerActivity", "ProfilerAction",
           "supported_activities", "EventList", "FunctionEvent", "FunctionEventAvg", "MemoryEvent"]
