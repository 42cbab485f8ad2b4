/* The emulated CUPTI's version header (the emulated CUDA device, cuda/emu/): the API version of the
 * CUPTI whose activity records cupti_activity.h lays out (CUDA 13.0's). */
#ifndef MT_EMU_CUPTI_VERSION_H
#define MT_EMU_CUPTI_VERSION_H

#define CUPTI_API_VERSION 130000

#endif
