#include "Utils.h"
void dlc::populateConvolutionHandlers(HandlerRegistry &) {}
