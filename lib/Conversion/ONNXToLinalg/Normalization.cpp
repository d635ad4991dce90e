#include "Utils.h"
void dlc::populateNormalizationHandlers(HandlerRegistry &) {}
