/* use_deterministic_algorithms in the dispatcher: the ops PyTorch lists as having no
 * deterministic implementation alert (fail, or leave a warning for csrc/python to give) when the
 * mode is on, and empty() fills its memory (NaN, or the dtype's largest value) when the mode and
 * utils.deterministic.fill_uninitialized_memory are both on. The switch is process-wide, as
 * PyTorch's; nothing here runs while it is off but one branch in mt_dispatch. */
#ifndef MT_DETERMINISTIC_H
#define MT_DETERMINISTIC_H

#include <stdbool.h>

#include "dispatch/dispatch.h"

extern bool mt_deterministic_on;

void mt_deterministic_set(bool on, bool warn_only, bool fill_uninitialized);

/* Before op runs: MT_ERUNTIME with PyTorch's message where op (with these arguments) has no
 * deterministic implementation, or MT_OK with the warning kept for mt_deterministic_take_warning
 * under warn_only. */
mt_status mt_deterministic_check(mt_op op, const mt_args *a);

/* After op ran: empty()'s result filled, where asked. */
mt_status mt_deterministic_after(mt_op op, mt_args *a);

/* Fills t as empty() fills new memory (NaN, or the dtype's largest value) while the mode and
 * utils.deterministic.fill_uninitialized_memory are on; MT_OK and nothing else otherwise. */
mt_status mt_deterministic_fill(mt_tensor *t);

/* The warning a warn_only alert of this thread left (NULL when none); taking it clears it. */
const char *mt_deterministic_take_warning(void);

#endif
