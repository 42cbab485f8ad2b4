"""minitorch.profiler: torch.profiler's API over minitorch's C profiler events, and the journey view."""
from .events import EventList, FunctionEvent, FunctionEventAvg, MemoryEvent
from .profiler import (ProfilerAction, ProfilerActivity, profile, record_function, schedule,
                       supported_activities, tensorboard_trace_handler)

__all__ = ["profile", "record_function", "schedule", "ProfilerActivity", "ProfilerAction",
           "supported_activities", "tensorboard_trace_handler", "EventList", "FunctionEvent", "FunctionEventAvg", "MemoryEvent"]
