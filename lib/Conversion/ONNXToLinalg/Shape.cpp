#include "Utils.h"
void dlc::populateShapeHandlers(HandlerRegistry &) {}
