#include "Utils.h"
void dlc::populateReductionHandlers(HandlerRegistry &) {}
